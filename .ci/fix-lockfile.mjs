// The npm registry reachable from these machines does not serve the darwin/win32/arm builds of
// @msgpackr-extract (an optional native accelerator of bullmq's msgpackr), so `npm install` here
// writes a lock file without them and `npm ci` then refuses it as "out of sync". This adds the
// missing entries back (os/cpu-restricted, optional: skipped on this platform, fetched where they
// apply). Run it after any `npm install` that rewrites package-lock.json:
//   node .ci/fix-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
let added = 0;
for (const [name, version] of Object.entries(parent?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const [os, cpu] = name.split('msgpackr-extract-')[1].split('-');
  lock.packages[key] = { version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
  added++;
}
const sorted = Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1));
lock.packages = Object.fromEntries(sorted);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`fix-lockfile: added ${added} platform entries`);
