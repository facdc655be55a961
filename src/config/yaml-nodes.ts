// What the YAML may hold before it becomes a plain object: mappings, sequences and scalars only.
// A typed node (`!!omap`, `!!set`, `!!binary`, a custom `!tag`) turns into something the schema
// reads as an empty block (a `behavior: !!omap` validated "ok" with its limits gone), and a key
// `__proto__` is dropped on the way: both are refused with their line.
import { isAlias, isMap, isScalar, isSeq, visit, type Document, type LineCounter } from 'yaml';
import type { ConfigIssue } from './errors.js';
import type { RawIssue } from './issue.js';
import { RESERVED } from './refs.js';

/** The tags of plain YAML (the core schema's); `!!str 0123` is how to keep a text a text. */
const PLAIN_TAGS = new Set(['map', 'seq', 'str', 'int', 'float', 'bool', 'null'].map((t) => `tag:yaml.org,2002:${t}`));

/** Keys that JavaScript objects treat as their prototype rather than as data. */
const RESERVED_KEYS = new Set(['__proto__']);

/** A node with a tag other than plain YAML's, and a key no object can hold, each by its path. */
export function nodeIssues(doc: Document): RawIssue[] {
  const issues: RawIssue[] = [];
  const walk = (node: unknown, path: (string | number)[]): void => {
    const tag = isMap(node) || isSeq(node) || isScalar(node) ? node.tag : undefined;
    if (tag !== undefined && !PLAIN_TAGS.has(tag)) {
      const what = isMap(node) ? 'a mapping' : isSeq(node) ? 'a list' : 'a value';
      const name = tag.replace(/^tag:yaml\.org,2002:/, '!!');
      // at the key that holds it: the node itself may start on the next line, after its tag
      const atKey = typeof path[path.length - 1] === 'string';
      issues.push({ path, atKey, message: `the YAML tag ${name} is not supported: write ${what} without a tag` });
      return; // what is inside a refused node is not read
    }
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
        if (RESERVED_KEYS.has(key)) {
          issues.push({ path: [...path, key], atKey: true, message: RESERVED(key) });
          continue;
        }
        walk(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i]));
    }
  };
  walk(doc.contents, []);
  return issues;
}

/** The issues without those about what is inside a refused node (a `!!binary` Buffer's bytes). */
export function withoutRefused(issues: readonly RawIssue[], refused: readonly RawIssue[]): RawIssue[] {
  const under = (inner: RawIssue['path'], outer: RawIssue['path']) =>
    inner.length >= outer.length && outer.every((seg, i) => inner[i] === seg);
  return issues.filter((i) => refused.includes(i) || !refused.some((r) => under(i.path, r.path)));
}

/**
 * How many nodes the document holds once every alias is expanded, counted without expanding them
 * (each anchored node's size is counted once and multiplied by its uses), stopping as soon as it
 * passes `limit`. An anchor a thousand pipes merge (`<<: *defaults`) costs a thousand copies of a
 * small node; a document that multiplies itself (aliases of aliases: a billion laughs) passes any
 * limit within a few levels.
 */
export function expandedSize(doc: Document, limit: number): number {
  // each alias's anchor, found in one pass (yaml's resolve() walks the whole document per alias)
  const targets = new Map<unknown, unknown>();
  const anchored = new Map<string, unknown>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) targets.set(node, anchored.get(node.source));
      else if (node.anchor) anchored.set(node.anchor, node);
    },
  });
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  const size = (node: unknown): number => {
    if (isAlias(node)) return size(targets.get(node));
    if (node === null || typeof node !== 'object') return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    // an alias inside its own anchor: a document without end
    if (open.has(node)) return Infinity;
    open.add(node);
    let n = 1;
    const items = isMap(node) || isSeq(node) ? (node.items as unknown[]) : [];
    for (const item of items) {
      n +=
        item !== null && typeof item === 'object' && 'key' in item && 'value' in item
          ? size((item as { key: unknown }).key) + size((item as { value: unknown }).value)
          : size(item);
      if (n > limit) break;
    }
    open.delete(node);
    sizes.set(node, n);
    return n;
  };
  return size(doc.contents);
}

/** Where the first alias is: the issue of a document whose aliases expand beyond the limit. */
export function aliasBombIssue(doc: Document, lc: LineCounter, limit: number): ConfigIssue {
  let offset = 0;
  visit(doc, {
    Alias(_, node) {
      if (isAlias(node) && node.range) offset = node.range[0];
      return visit.BREAK;
    },
  });
  const { line, col } = lc.linePos(offset);
  return {
    path: '',
    line,
    column: col,
    message: `YAML aliases expand the document past ${limit.toLocaleString('en-US')} nodes: a document that multiplies itself is refused`,
  };
}
