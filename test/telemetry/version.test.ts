// `pipescaler --version` and pipescaler_build_info carry package.json's version.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Registry, createMetrics } from '../../src/telemetry/index.js';
import { VERSION } from '../../src/version.js';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

describe('the package version', () => {
  it('is read from package.json', () => {
    expect(VERSION).toBe(pkg.version);
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('labels pipescaler_build_info without being passed in', async () => {
    const registry = new Registry();
    createMetrics(registry, { defaultMetrics: false });
    const text = await registry.metrics();
    expect(text).toContain(`pipescaler_build_info{version="${pkg.version}",node="${process.versions.node}"} 1`);
  });

  it('is what `pipescaler --version` prints (from dist/, as installed)', () => {
    expect(execFileSync(process.execPath, ['dist/cli/main.js', '--version'], { encoding: 'utf8' }).trim()).toBe(
      pkg.version,
    );
  });
});
