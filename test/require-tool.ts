// The external tools some tests run, and whether each is here. A test file that needs one skips
// itself with `describe.skipIf(!requireTool(bin, pkg))`; test/tools-setup.ts (vitest's globalSetup)
// checks them all once per run, prints one line per missing Debian package, and under CI fails the
// run at once, so CI always runs everything. No shell is spawned: PATH is searched the way
// `command -v` does.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** A tool the suite runs: the binary as the tests name it, and the Debian package that has it. */
export interface Tool {
  readonly bin: string;
  readonly debianPackage: string;
}

/** Every tool a test needs beyond Node and Redis; the env variables let a test use another binary. */
export const TOOLS: readonly Tool[] = [
  { bin: process.env.PROMETHEUS_BIN ?? 'prometheus', debianPackage: 'prometheus' },
  { bin: process.env.PROMTOOL_BIN ?? 'promtool', debianPackage: 'prometheus' },
  { bin: process.env.CHROMIUM_PATH ?? 'chromium', debianPackage: 'chromium' },
  { bin: 'redis-sentinel', debianPackage: 'redis-sentinel' },
  { bin: 'systemd-analyze', debianPackage: 'systemd' },
  { bin: process.env.ALERTMANAGER_BIN ?? 'prometheus-alertmanager', debianPackage: 'prometheus-alertmanager' },
];

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of `bin` (a name searched on PATH, or a path with a slash taken as is), or null. */
export function findTool(bin: string, path = process.env.PATH ?? ''): string | null {
  if (bin.includes('/')) return isExecutableFile(bin) ? bin : null;
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, bin);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Whether `bin` is here; the test file skips its tests when not. The tool must be one of TOOLS, so
 * that the run's one line (test/tools-setup.ts) says what was skipped and how to install it.
 */
export function requireTool(bin: string, debianPackage: string): boolean {
  if (!TOOLS.some((t) => t.bin === bin && t.debianPackage === debianPackage))
    throw new Error(`${bin} (Debian package ${debianPackage}) is not in TOOLS of test/require-tool.ts`);
  return findTool(bin) !== null;
}

/** Whether this run is CI's (CI=true or CI=1), where every test runs and a missing tool fails. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** One line per Debian package with a missing binary, naming the binaries and how to get them. */
export function skipLines(missing: readonly Tool[]): string[] {
  const byPackage = new Map<string, string[]>();
  for (const t of missing) byPackage.set(t.debianPackage, [...(byPackage.get(t.debianPackage) ?? []), t.bin]);
  return [...byPackage].map(
    ([pkg, bins]) => `skipped: tests that need ${bins.join(', ')} (Debian package ${pkg}: apt-get install ${pkg})`,
  );
}

/** The tools of `tools` not found. */
export function missingTools(tools: readonly Tool[] = TOOLS, path = process.env.PATH ?? ''): Tool[] {
  return tools.filter((t) => findTool(t.bin, path) === null);
}
