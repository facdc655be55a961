// The package version, read once from package.json (the parent of both src/ and dist/), for
// `pipescaler --version` and pipescaler_build_info.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' && pkg.version !== '' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION: string = readVersion();
