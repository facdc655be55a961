// Every dependency that has an install script is decided in package.json's allowScripts (npm 11
// runs none it does not allow, and `npm ci` warns about each one not decided): a package the
// lockfile gains with an install script fails here until it is allowed or denied with a reason
// (docs/development.md, "CI and install scripts"). No entry outlives its package.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

/** `node_modules/a/node_modules/@s/b` -> `@s/b` */
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts', () => {
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([path, p]) => path !== '' && p.hasInstallScript === true)
        .map(([path]) => nameOf(path)),
    ),
  ].sort();

  it('each locked package with an install script is allowed or denied by name, and only those', () => {
    const decided = Object.keys(pkg.allowScripts ?? {}).sort();
    expect(decided).toEqual(withScripts);
  });

  it('both are denied: neither is needed to build, test or run', () => {
    // esbuild: its postinstall checks (or downloads) the platform binary, which npm installs as the
    // optional @esbuild/<platform> package. msgpackr-extract: its install compiles the addon with
    // node-gyp when no prebuilt @msgpackr-extract/<platform> package fits; msgpackr falls back to
    // JavaScript without it.
    expect(pkg.allowScripts).toEqual({ esbuild: false, 'msgpackr-extract': false });
  });
});
