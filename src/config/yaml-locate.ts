// Line and column of a path in a parsed YAML document. A missing key points at the nearest
// ancestor that exists; an unknown key points at the key itself.
import { isMap, isScalar, type Document, type LineCounter, type Node } from 'yaml';

export interface Position {
  readonly line: number;
  readonly column: number;
}

function nodeAt(doc: Document, path: readonly (string | number)[]): unknown {
  return path.length === 0 ? doc.contents : doc.getIn(path, true);
}

function start(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

export function locate(doc: Document, lc: LineCounter, path: readonly (string | number)[], atKey = false): Position {
  let offset: number | undefined;
  if (atKey && path.length > 0) {
    const parent = nodeAt(doc, path.slice(0, -1));
    const key = path[path.length - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
      offset = start(pair?.key);
    }
  }
  for (let n = path.length; offset === undefined && n >= 0; n--) {
    offset = start(nodeAt(doc, path.slice(0, n)));
  }
  const { line, col } = lc.linePos(offset ?? 0);
  return { line, column: col };
}
