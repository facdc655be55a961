// A problem found in the config before it has a line: its path in the parsed document, and whether
// it points at the key itself (an unknown or reserved key) rather than at the value.
export interface RawIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
  readonly atKey?: boolean;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
