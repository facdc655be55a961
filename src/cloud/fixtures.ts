// Loading and checking fixtures: zod for shapes, a few cross-references zod cannot see (unique
// ids, one source member per pipe, alerts on existing tiles), errors naming the field and line.
import { readFileSync } from 'node:fs';
import { isMap, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { pipeKind } from '../api/index.js';
import { formatIssues, formatPath, issueMessages } from './errors.js';
import { FixturesSchema, type Fixtures, type ParsedFixtures } from './fixtures-schema.js';

export class FixturesError extends Error {
  override readonly name = 'FixturesError';
  /** Shares the CONFIG_ prefix so the CLI prints it as one line. */
  readonly code = 'CONFIG_INVALID';
}

type Ctx = z.RefinementCtx;

function checkReferences(f: ParsedFixtures, ctx: Ctx): void {
  const seen = new Map<string, string>();
  const unique = (kind: string, id: string, path: (string | number)[]) => {
    const key = `${kind}:${id.toLowerCase()}`;
    const first = seen.get(key);
    if (first) ctx.addIssue({ code: 'custom', path, message: `duplicate ${kind} id ${id} (first at ${first})` });
    else seen.set(key, formatPath(path));
  };
  f.apiKeys.forEach((k, i) => unique('key', k.keyId, ['apiKeys', i, 'keyId']));
  f.organizations.forEach((org, o) => {
    unique('organization', org.id, ['organizations', o, 'id']);
    org.services.forEach((svc, s) => {
      const at = ['organizations', o, 'services', s];
      unique('service', svc.id, [...at, 'id']);
      svc.pipes.forEach((p, i) => {
        unique('pipe', p.id, [...at, 'pipes', i, 'id']);
        if (p.serviceId !== undefined && p.serviceId !== svc.id) {
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'pipes', i, 'serviceId'],
            message: `must be the service's id ${svc.id} (or left out)`,
          });
        }
        const members = ['kafka', 'kinesis', 'objectStorage', 'postgres'].filter((m) => p.source[m] != null);
        if (members.length !== 1 || pipeKind(p.source) === null) {
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'pipes', i, 'source'],
            message: 'must have exactly one of kafka, kinesis, objectStorage, postgres',
          });
        }
      });
      svc.reversePrivateEndpoints.forEach((e, i) =>
        unique('reverse private endpoint', e.id, [...at, 'reversePrivateEndpoints', i, 'id']),
      );
      const tiles = new Map<string, Set<string>>();
      svc.stack.dashboards.forEach((d, i) => {
        unique('dashboard', d.id, [...at, 'stack', 'dashboards', i, 'id']);
        tiles.set(d.id, new Set(d.tiles.flatMap((t) => (t.id ? [t.id] : []))));
      });
      svc.stack.alerts.forEach((a, i) => {
        unique('alert', a.id, [...at, 'stack', 'alerts', i, 'id']);
        if (a.source !== 'tile' || !a.dashboardId) return;
        const dashTiles = tiles.get(a.dashboardId);
        if (!dashTiles)
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'stack', 'alerts', i, 'dashboardId'],
            message: `unknown dashboard ${a.dashboardId}`,
          });
        else if (a.tileId && !dashTiles.has(a.tileId)) {
          ctx.addIssue({
            code: 'custom',
            path: [...at, 'stack', 'alerts', i, 'tileId'],
            message: `unknown tile ${a.tileId} on dashboard ${a.dashboardId}`,
          });
        }
      });
      svc.stack.sources.forEach((src, i) => unique('source', src.id, [...at, 'stack', 'sources', i, 'id']));
    });
  });
}

const CheckedFixtures = FixturesSchema.superRefine(checkReferences);

/** Validate fixtures given as an object (the benchmark and tests build them in code). */
export function parseFixtures(input: unknown, where = 'fixtures'): ParsedFixtures {
  const r = CheckedFixtures.safeParse(input, { error: issueMessages });
  if (!r.success) throw new FixturesError(`${where}: ${formatIssues(r.error.issues)}`);
  return r.data;
}

// The node an issue points at: the value at its path, or, for unknown members, the member's key;
// walking up the path when the value is missing.
function nodeFor(doc: Document, iss: z.core.$ZodIssue): Node | undefined {
  const path = [...iss.path] as (string | number)[];
  for (; path.length >= 0; path.pop()) {
    const node = doc.getIn(path, true) as Node | undefined;
    if (node && iss.code === 'unrecognized_keys' && isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === iss.keys[0]);
      if (pair?.key) return pair.key as Node;
    }
    if (node && typeof node === 'object' && 'range' in node) return node;
    if (path.length === 0) return doc.contents ?? undefined;
  }
  return undefined;
}

/** Read and validate a fixtures YAML file; a mistake names the file, line, column and field. */
export function loadFixtures(path: string): ParsedFixtures {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new FixturesError(`${path}: cannot read fixtures: ${(err as Error).message}`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const [e] = doc.errors;
  if (e) {
    const pos = lineCounter.linePos(e.pos[0]);
    throw new FixturesError(`${path}:${pos.line}:${pos.col}: ${e.message.split('\n')[0]}`);
  }
  const r = CheckedFixtures.safeParse(doc.toJS(), { error: issueMessages });
  if (r.success) return r.data;
  const lines = r.error.issues.map((iss) => {
    const node = nodeFor(doc, iss);
    const pos = node?.range ? lineCounter.linePos(node.range[0]) : undefined;
    return `${path}${pos ? `:${pos.line}:${pos.col}` : ''}: ${formatIssues([iss])}`;
  });
  throw new FixturesError(lines.join('\n'));
}

/** The first key of the fixtures (of that organization, when given). */
export function demoCredentials(
  fixtures: Fixtures,
  organizationId?: string,
): { keyId: string; keySecret: string; organizationId: string } {
  const key = fixtures.apiKeys.find((k) => organizationId === undefined || k.organizationId === organizationId);
  if (!key) throw new FixturesError(`fixtures: no API key for organization ${organizationId ?? '(any)'}`);
  return { keyId: key.keyId, keySecret: key.keySecret, organizationId: key.organizationId };
}
