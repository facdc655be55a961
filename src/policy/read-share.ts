// The share of each API key's request budget reads may take (evaluate.readShare): reconcile reads
// (key-budget.ts) and, in the lead plan, the confirmation reads of its scale-ups (lead-plan.ts).

export const DEFAULT_READ_SHARE = 0.25;

export function readShareOf(config: { readonly evaluate: { readonly readShare?: number } }): number {
  return config.evaluate.readShare ?? DEFAULT_READ_SHARE;
}
