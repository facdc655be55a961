// A pipe of the config in force by its name, from an index made once per config.
import type { PipeConfig } from '../../policy/index.js';
import type { Config } from '../../config/index.js';

export function pipeByName(config: Config, name: string): PipeConfig | undefined {
  let byName = pipeIndex.get(config);
  if (!byName) {
    byName = new Map(config.pipes.map((p) => [p.name, p]));
    pipeIndex.set(config, byName);
  }
  return byName.get(name);
}

// A config is never changed once loaded (a reload swaps in another), so its index is made once:
// a find() per job was a tenth of a steady tick's CPU at 10,000 pipes (O(N) per job).
const pipeIndex = new WeakMap<Config, ReadonlyMap<string, PipeConfig>>();
