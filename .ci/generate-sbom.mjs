// The SBOM of the production install (config/sbom.cdx.json, CycloneDX): what `npm ci --omit=dev
// --omit=optional` installs, which is what the image ships, as npm's own `npm sbom` lists it.
// Run it after any change of package-lock.json (test/package/production-install.test.ts fails
// until then):
//   node .ci/generate-sbom.mjs            (re)write config/sbom.cdx.json
//   node .ci/generate-sbom.mjs --check    exit 1 when it is not current
//   ... --installed DIR                   use a production install already made in DIR
// Made in a production install rather than with `npm sbom --omit dev` here, because npm 11 also
// drops the production packages that a dev dependency shares (yaml, semver), and `--omit optional`
// more (pino). The install's package.json loses its devDependencies, which are not there and
// which `npm sbom` would report as missing. Serial number and timestamp are left out, so the same
// lock file gives the same file.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = join(root, 'config', 'sbom.cdx.json');
const args = process.argv.slice(2);
const check = args.includes('--check');
const at = args.indexOf('--installed');
const given = at >= 0 ? args[at + 1] : undefined;

const npm = (cwd, ...a) => execFileSync('npm', a, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const dir = given ?? mkdtempSync(join(tmpdir(), 'pipescaler-sbom-'));
try {
  if (given === undefined) {
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(dir, f));
    npm(dir, 'ci', '--omit=dev', '--omit=optional', '--offline', '--ignore-scripts', '--no-audit', '--no-fund');
  }
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  delete pkg.devDependencies;
  const original = readFileSync(join(dir, 'package.json'), 'utf8');
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  let bom;
  try {
    bom = JSON.parse(npm(dir, 'sbom', '--sbom-format', 'cyclonedx', '--sbom-type', 'application'));
  } finally {
    writeFileSync(join(dir, 'package.json'), original);
  }
  delete bom.serialNumber;
  delete bom.metadata.timestamp;
  // npm names the root component after its folder: a temporary one here
  bom.metadata.component.name = pkg.name;
  bom.metadata.component['bom-ref'] = `${pkg.name}@${pkg.version}`;
  const text = `${JSON.stringify(bom, null, 2)}\n`;
  if (check) {
    let committed = '';
    try {
      committed = readFileSync(target, 'utf8');
    } catch {
      // missing: not current
    }
    if (committed !== text) {
      console.error('config/sbom.cdx.json is not current: run `node .ci/generate-sbom.mjs`');
      process.exit(1);
    }
    console.log(`config/sbom.cdx.json is current (${bom.components.length} components)`);
  } else {
    writeFileSync(target, text);
    console.log(`wrote config/sbom.cdx.json (${bom.components.length} components)`);
  }
} finally {
  if (given === undefined) rmSync(dir, { recursive: true, force: true });
}
