// Text that came from elsewhere (the platform's error texts, an operator's pause reason, a URL
// from the environment), made safe to keep and to show: bounded before it is stored, stripped of
// terminal control before it is printed, and a URL without its credentials. One module, so every
// writer and printer applies the same rules.

/** The longest text kept of one foreign value (an error text, a pause reason): a 3 MB error
 *  page stored whole in every pipe's record would be read back on every status. */
export const MAX_TEXT = 2_000;

/**
 * ANSI/VT escape sequences: CSI (`ESC [ ... final`, also the 8-bit 0x9b), OSC/DCS/PM/APC/SOS
 * strings up to their terminator (BEL or ST), and the two-byte `ESC x` forms. They move the
 * cursor, rewrite lines, set the title or copy to the clipboard.
 */
const ESCAPES =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|(?:\u001b[\]PX^_]|[\u0090\u009d\u009e\u009f\u0098])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]?/g;
/** What is left that a terminal acts on: C0 (newlines and tabs too: a printed field is one line),
 *  DEL, C1, and the bidirectional overrides that reorder what the reader sees. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A foreign text made printable on one line: escape sequences removed, other controls a space. */
export function printable(text: string): string {
  return text.replace(ESCAPES, '').replace(CONTROLS, ' ');
}

/** At most `max` characters (never half a surrogate pair), saying how much was cut. */
export function bounded(text: string, max = MAX_TEXT): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}... (${text.length - end} more characters)`;
}

/** Every string inside a stored value bounded (objects and arrays walked; other values as given). */
export function boundedTexts<T>(value: T, max = MAX_TEXT): T {
  if (typeof value === 'string') return bounded(value, max) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => boundedTexts(v, max)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, boundedTexts(v, max)])) as T;
  }
  return value;
}

/** Query parameters whose value is a credential (`?token=`, `?api_key=`, `?X-Amz-Signature=`). */
const SECRET_PARAM = /token|key|secret|pass|auth|sig|credential|session/i;
const MASK = '***';

/**
 * A URL to show: userinfo replaced by `***` and credential-like query values masked. Anything
 * else ("embedded", a URL that does not parse) loses what looks like userinfo all the same.
 */
export function safeUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i, `$1${MASK}@`);
  const u = new URL(url);
  if (u.username !== '' || u.password !== '') {
    u.username = MASK;
    u.password = '';
  }
  for (const name of [...u.searchParams.keys()]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, MASK);
  // URL would add a trailing slash to a bare origin: keep what the user wrote where nothing changed
  const out = u.toString();
  return out === `${url}/` || out === url ? url : out;
}
