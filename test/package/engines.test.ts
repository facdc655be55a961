// package.json's engines is honest about every installed package: each of its ranges' lowest Node
// (20.19.0, 22.13.0, 24.0.0) satisfies the engines.node of every package `npm ci` installs, the
// optional and the dev ones included (cookie@2 needed Node 22 while engines said 20.18.1). A
// dependency that raises its floor fails here: pin a version below it, as light-my-request (for
// cookie@1) and openapi-backend (for json-schema-ref-parser 11) are, or raise engines.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

describe('engines', () => {
  it("accepts no Node that an installed package's engines refuses", () => {
    const floors = pkg.engines.node.split('||').map((r) => semver.minVersion(r.trim())!.version);
    expect(floors).toEqual(['20.19.0', '22.13.0', '24.0.0']);
    const ls = spawnSync('npm', ['ls', '--all', '--parseable'], { encoding: 'utf8', timeout: 60_000 });
    const dirs = ls.stdout.trim().split('\n').slice(1);
    expect(dirs.length).toBeGreaterThan(100);
    const refused: string[] = [];
    for (const dir of new Set(dirs)) {
      const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        engines?: { node?: string };
      };
      const range = p.engines?.node;
      if (range === undefined) continue;
      for (const floor of floors) {
        if (!semver.satisfies(floor, range)) refused.push(`${p.name}@${p.version} (node ${range}) refuses ${floor}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
