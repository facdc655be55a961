// Label values are kept to closed or config-derived sets: a label never carries an id, a URL or
// free text, so a careless event payload can neither blow up cardinality nor leak a secret.
import { API_ERROR_CODES, OPERATIONS, SCALING_FIELDS } from '../api/index.js';
import { SAFETY_VIOLATIONS } from '../daemon/index.js';
import { REASON_CODES } from '../policy/index.js';

/** What the `reason` label of a decision may be: a decide() reason code (window, baseline,
 *  lead_time, a skip code...), the API error code of a failed call, or the safety rule that
 *  refused a change (docs/decisions.md#the-reason-label-of-the-decisions-metric). */
const REASONS: ReadonlySet<string> = new Set<string>([...REASON_CODES, ...API_ERROR_CODES, ...SAFETY_VIOLATIONS]);
const OPERATION_SET: ReadonlySet<string> = new Set<string>(OPERATIONS);
const CODE_SET: ReadonlySet<string> = new Set<string>(API_ERROR_CODES);
const FIELD_SET: ReadonlySet<string> = new Set<string>(SCALING_FIELDS);

export const OTHER = 'other';

/** The API operations the daemon calls (the CLI's others never reach its metrics). */
export const DAEMON_OPERATIONS = ['scalePipe', 'getReversePrivateEndpoint', 'listServices'] as const;
/** Every error code, for series that start at 0. */
export const ERROR_CODES: readonly string[] = API_ERROR_CODES;

/** Config names (pipes, windows, API keys): lower-case words, as the config loader enforces. */
const CONFIG_NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

export const configName = (name: string): string => (CONFIG_NAME.test(name) ? name : OTHER);
export const reasonLabel = (reason: string): string => (REASONS.has(reason) ? reason : OTHER);
export const operationLabel = (op: string): string => (OPERATION_SET.has(op) ? op : OTHER);
export const codeLabel = (code: string): string => (CODE_SET.has(code) ? code : OTHER);
export const isFieldLabel = (field: string): boolean => FIELD_SET.has(field);

/** HTTP status as a label; 'none' when no response arrived (timeout, network). */
export function statusLabel(status: number | null): string {
  if (status === null) return 'none';
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : OTHER;
}
