// A pipe's policy and API key as the loaded config names them. The loader refuses a config whose
// pipe names a policy or key it does not define (config/refs.ts), so a miss here is a broken
// invariant (a config built by hand past the loader): it throws, naming the pipe, instead of
// passing undefined on.
import type { ApiKeyConfig, Config, PipeConfig, Policy } from './types.js';

export function policyOf(config: Pick<Config, 'policies'>, pipe: Pick<PipeConfig, 'name' | 'policy'>): Policy {
  const policy = config.policies[pipe.policy];
  if (!policy) throw new Error(`pipe ${pipe.name}: policy ${pipe.policy} is not in the config`);
  return policy;
}

export function keyOf(config: Pick<Config, 'api'>, pipe: Pick<PipeConfig, 'name' | 'key'>): ApiKeyConfig {
  const key = config.api.keys[pipe.key];
  if (!key) throw new Error(`pipe ${pipe.name}: API key ${pipe.key} is not in the config`);
  return key;
}
