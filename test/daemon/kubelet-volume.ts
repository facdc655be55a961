// A ConfigMap or Secret volume laid out and updated the way the kubelet does it (its AtomicWriter):
// the files live in a timestamped folder, `..data` is a symlink to that folder, and each file's name
// is a symlink through `..data`. An update writes a new timestamped folder, points `..data_tmp` at
// it, renames `..data_tmp` over `..data` (the one atomic step), adds the new names' symlinks,
// removes the names no longer there and deletes the old folder.
import {
  mkdtempSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';

const DATA = '..data';

/** `..2026_11_24_21_50_00.` as the kubelet names it (UTC); mkdtemp adds the random part. */
function stamp(at: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${at.getUTCFullYear()}_${p(at.getUTCMonth() + 1)}_${p(at.getUTCDate())}_${p(at.getUTCHours())}_${p(at.getUTCMinutes())}_${p(at.getUTCSeconds())}.`;
}

function currentNames(dir: string): string[] {
  return readdirSync(dir).filter((n) => !n.startsWith('..'));
}

/** Writes `files` into the volume at `dir` (an existing, possibly empty folder), as a mount or an update. */
export function writeVolume(dir: string, files: Record<string, string>, at = new Date()): void {
  let old: string | null = null;
  try {
    old = readlinkSync(join(dir, DATA));
  } catch {
    // first mount
  }
  const fresh = mkdtempSync(join(dir, stamp(at)));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(fresh, name), text, { mode: 0o644 });
  symlinkSync(basename(fresh), join(dir, `${DATA}_tmp`));
  renameSync(join(dir, `${DATA}_tmp`), join(dir, DATA));
  const visible = new Set(currentNames(dir));
  for (const name of Object.keys(files)) {
    if (!visible.has(name)) symlinkSync(join(DATA, name), join(dir, name));
  }
  for (const name of visible) {
    if (!(name in files)) unlinkSync(join(dir, name));
  }
  if (old !== null) rmSync(join(dir, old), { recursive: true, force: true });
}

/** An iCalendar file of one all-day holiday, as a mounted calendar holds. */
export const holidayCalendar = (date: string): string =>
  `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:${date}@test\r\nDTSTAMP:20261101T000000Z\r\n` +
  `DTSTART;VALUE=DATE:${date.replaceAll('-', '')}\r\nSUMMARY:Holiday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`;
