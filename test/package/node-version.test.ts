// Which Node runs the suite. .ci/run runs the whole suite on the machine's Node 20 and
// `npm run test:runtime` (this file among them) on the image's Node 24, and says which by
// PIPESCALER_CI_NODE: this pins that the run really is on that Node (the workers and what the
// tests start alike), and that package.json engines accepts it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
};
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

describe('the Node under test', () => {
  it('is the one .ci/run asked for, in the workers and in what the tests start, and engines accepts it', () => {
    console.log(`suite on Node ${process.version}`);
    const started = spawnSync(process.execPath, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    const onPath = spawnSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(started.stdout.trim()).toBe(process.versions.node);
    expect(onPath.stdout.trim()).toBe(process.versions.node);
    const wanted = process.env.PIPESCALER_CI_NODE;
    if (wanted !== undefined) expect(process.versions.node).toBe(wanted);
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
  });
});
