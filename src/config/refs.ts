// Checks across the config that no single field can make: unique pipe names and pipe ids, policy
// and key (or key pool) references that exist, unique window names. They read the raw document, so they report
// alongside the schema's issues even when other parts of the file are broken.
import { closest } from './did-you-mean.js';
import { LOWER_NAME, LOWER_NAME_RULE } from './fields.js';
import { isRecord, type RawIssue } from './issue.js';

/** Names that are properties of every JavaScript object (`__proto__`, `constructor`, `toString`...):
 *  as a policy or key name they would look defined everywhere and crash validate and plan. */
export function isReservedName(name: string): boolean {
  return name === '__proto__' || name === 'prototype' || name in Object.prototype;
}

export const RESERVED = (name: string): string =>
  `"${name}" cannot be a name: it is a property of every JavaScript object; rename it`;

const known = (names: readonly string[]): string =>
  names.length === 0 ? 'none defined' : `known: ${names.join(', ')}`;

export function crossCheck(raw: unknown): RawIssue[] {
  const issues: RawIssue[] = [];
  if (!isRecord(raw)) return issues;
  const allPolicyNames = isRecord(raw.policies) ? Object.keys(raw.policies) : [];
  for (const name of allPolicyNames.filter(isReservedName))
    issues.push({ path: ['policies', name], atKey: true, message: RESERVED(name) });
  const policyNames = allPolicyNames.filter((n) => !isReservedName(n));
  const api = isRecord(raw.api) ? raw.api : {};
  const extraKeys = isRecord(api.keys) ? Object.keys(api.keys) : [];
  const keyNames = ['default', ...extraKeys.filter((k) => k !== 'default')];

  for (const name of extraKeys) {
    if (isReservedName(name)) {
      issues.push({ path: ['api', 'keys', name], atKey: true, message: RESERVED(name) });
      continue;
    }
    // key names name the apply queue of each key (and its metrics label)
    if (name !== 'default' && !LOWER_NAME.test(name)) {
      issues.push({ path: ['api', 'keys', name], atKey: true, message: `key name "${name}" ${LOWER_NAME_RULE}` });
    }
  }
  if (extraKeys.includes('default')) {
    issues.push({
      path: ['api', 'keys', 'default'],
      atKey: true,
      message: '"default" is the key of api.keyId/api.keySecret; give this key another name',
    });
  }
  // pools (key-pool.ts): a pipe names a pool as it names a key, so the two share one namespace
  const poolOf = new Map<string, string>();
  if (isRecord(api.keys)) {
    for (const [name, spec] of Object.entries(api.keys)) {
      if (isReservedName(name) || !isRecord(spec) || typeof spec.pool !== 'string' || spec.pool === '') continue;
      poolOf.set(name, spec.pool);
      if (isReservedName(spec.pool)) issues.push({ path: ['api', 'keys', name, 'pool'], message: RESERVED(spec.pool) });
      else if (keyNames.includes(spec.pool)) {
        issues.push({
          path: ['api', 'keys', name, 'pool'],
          message: `pool "${spec.pool}" has the name of an API key, so key: ${spec.pool} would be ambiguous; rename the pool or the key`,
        });
      }
    }
  }
  const poolNames = [...new Set(poolOf.values())].filter((p) => !isReservedName(p));

  const byName = new Map<string, number>();
  const byId = new Map<string, number>();
  const pipes = Array.isArray(raw.pipes) ? raw.pipes : [];
  pipes.forEach((p, i) => {
    if (!isRecord(p)) return;
    if (typeof p.name === 'string') {
      const first = byName.get(p.name);
      if (first !== undefined)
        issues.push({ path: ['pipes', i, 'name'], message: `duplicate pipe name "${p.name}" (also pipes[${first}])` });
      else byName.set(p.name, i);
    }
    if (typeof p.pipeId === 'string') {
      const id = `${String(p.serviceId).toLowerCase()}/${p.pipeId.toLowerCase()}`;
      const first = byId.get(id);
      if (first !== undefined)
        issues.push({
          path: ['pipes', i, 'pipeId'],
          message: `this pipe is already configured as pipes[${first}]; one pipe, one policy`,
        });
      else byId.set(id, i);
    }
    if (typeof p.policy === 'string' && !policyNames.includes(p.policy)) {
      const hint = closest(p.policy, policyNames);
      issues.push({
        path: ['pipes', i, 'policy'],
        message: `unknown policy "${p.policy}"${hint ? ` (did you mean "${hint}"?)` : ''}; ${known(policyNames)}`,
      });
    }
    const pool = typeof p.key === 'string' ? poolOf.get(p.key) : undefined;
    if (typeof p.key === 'string' && !keyNames.includes(p.key) && !poolNames.includes(p.key)) {
      const names = [...keyNames.filter((k) => !poolOf.has(k)), ...poolNames];
      const hint = closest(p.key, names);
      const pools = poolNames.length > 0 ? `; pools: ${poolNames.join(', ')} (api.keys.<key>.pool)` : '';
      issues.push({
        path: ['pipes', i, 'key'],
        message:
          `unknown API key${poolNames.length > 0 ? ' or pool' : ''} "${p.key}"${hint ? ` (did you mean "${hint}"?)` : ''}; ` +
          `${known(keyNames.filter((k) => !poolOf.has(k)))} (api.keys)${pools}`,
      });
    } else if (typeof p.key === 'string' && pool !== undefined) {
      issues.push({
        path: ['pipes', i, 'key'],
        message: `the key "${p.key}" serves the pool "${pool}": name the pool (key: ${pool}), which spreads its pipes over its keys; a pooled key serves only its pool`,
      });
    }
  });

  if (isRecord(raw.policies)) {
    for (const [name, policy] of Object.entries(raw.policies)) {
      if (!isRecord(policy) || !Array.isArray(policy.windows)) continue;
      const seen = new Map<string, number>();
      policy.windows.forEach((w, i) => {
        if (!isRecord(w) || typeof w.name !== 'string') return;
        const first = seen.get(w.name);
        if (first !== undefined) {
          issues.push({
            path: ['policies', name, 'windows', i, 'name'],
            message: `duplicate window name "${w.name}" (also windows[${first}])`,
          });
        } else seen.set(w.name, i);
      });
    }
  }
  return issues;
}
