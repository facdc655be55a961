// A pipe's policy and API key as the loaded config names them. The loader refuses a config whose
// pipe names a policy or key it does not define (config/refs.ts), so a miss here is a broken
// invariant (a config built by hand past the loader): it throws, naming the pipe, instead of
// passing undefined on.
import type { KeyLimits, ScalingConfig, PipeConfig, Policy } from './types.js';

export function policyOf(config: Pick<ScalingConfig, 'policies'>, pipe: Pick<PipeConfig, 'name' | 'policy'>): Policy {
  const policy = config.policies[pipe.policy];
  if (!policy) throw new Error(`pipe ${pipe.name}: policy ${pipe.policy} is not in the config`);
  return policy;
}

/** The pipe's key as `config` holds it: its limits here, with its id and secret in the full config. */
export function keyOf<K extends KeyLimits>(
  config: { readonly api: { readonly keys: Readonly<Record<string, K>> } },
  pipe: Pick<PipeConfig, 'name' | 'key'>,
): K {
  const key = config.api.keys[pipe.key];
  if (!key) throw new Error(`pipe ${pipe.name}: API key ${pipe.key} is not in the config`);
  return key;
}
