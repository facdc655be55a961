// Every folder of src/ that holds TypeScript has a README.md that is its map: a title, its purpose
// in one line, and every .ts file and sub-folder of it named (`name.ts`, `name/`, in backticks,
// anywhere in the text). A README never names a file that is not there: a bare name must be a file
// of the folder or of one below it, a path must lead to a file from the folder, its top folder
// (src/<name>), src/ or the repository's root. So a file added, renamed or deleted fails here
// until its folder's README follows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every folder under src/ that holds a .ts file, at any depth. */
function tsFolders(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const below = entries.filter((e) => e.isDirectory()).flatMap((e) => tsFolders(join(dir, e.name)));
  return entries.some((e) => e.isFile() && e.name.endsWith('.ts')) ? [dir, ...below] : below;
}

const FOLDERS = tsFolders('src')
  .filter((d) => d !== 'src')
  .sort();

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => e.name);

const subFolders = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

/** The names of the .ts files in a folder and every folder below it. */
function treeFiles(dir: string): Set<string> {
  return new Set([...tsFiles(dir), ...subFolders(dir).flatMap((s) => [...treeFiles(join(dir, s))])]);
}

/** Every .ts file a text mentions, backticks or not (URLs left out): `a.ts`, `room/a.ts`, `../x/a.ts`. */
function mentionedTs(text: string): string[] {
  const segment = String.raw`[\w-]+(?:\.(?!ts\b)[\w-]+)*`;
  const path = new RegExp(String.raw`(?<![\w.-])((?:\.\.?/)*(?:${segment}/)*${segment}\.ts)(?![\w-])`, 'g');
  return [...text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '').matchAll(path)].map((m) => m[1]!);
}

/** Whether a mention of a .ts file in the README of `dir` leads to a file. */
function leadsToFile(dir: string, mention: string): boolean {
  if (!mention.includes('/')) return treeFiles(dir).has(mention);
  const top = dir.split('/').slice(0, 2).join('/');
  return [dir, top, 'src', '.'].some((base) => existsSync(normalize(join(base, mention))));
}

/** The first paragraph after the title: the lines up to the first blank one. */
function purpose(markdown: string): { title: string | undefined; lines: string[] } {
  const lines = markdown.split('\n');
  const title = /^# \S/.test(lines[0] ?? '') ? lines[0] : undefined;
  let i = 1;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const paragraph: string[] = [];
  while (i < lines.length && lines[i]!.trim() !== '') paragraph.push(lines[i++]!);
  return { title, lines: paragraph };
}

describe("each folder's README", () => {
  it('covers every folder of src/ that holds TypeScript', () => {
    // The walk itself: a folder it missed would go unchecked.
    expect(FOLDERS).toEqual(expect.arrayContaining(['src/api/schemas', 'src/cli/commands', 'src/cloud/routes']));
    expect(FOLDERS.length).toBeGreaterThanOrEqual(20);
  });

  it('exists', () => {
    expect(FOLDERS.filter((d) => !existsSync(join(d, 'README.md')))).toEqual([]);
  });

  it('opens with a title and the folder purpose in one line', () => {
    const wrong: string[] = [];
    for (const dir of FOLDERS.filter((d) => existsSync(join(d, 'README.md')))) {
      const { title, lines } = purpose(readFileSync(join(dir, 'README.md'), 'utf8'));
      if (title === undefined) wrong.push(`${dir}: the first line is not a "# " title`);
      else if (lines.length !== 1) wrong.push(`${dir}: the purpose after the title is ${lines.length} lines, not one`);
      else if (/^([#|>`-]|\d+\.|\*)/.test(lines[0]!)) wrong.push(`${dir}: what follows the title is no sentence`);
    }
    expect(wrong).toEqual([]);
  });

  it('names every .ts file and sub-folder of its folder, and no .ts file that is not there', () => {
    const problems: string[] = [];
    for (const dir of FOLDERS.filter((d) => existsSync(join(d, 'README.md')))) {
      const text = readFileSync(join(dir, 'README.md'), 'utf8');
      const missing = [
        ...tsFiles(dir).filter((f) => !text.includes(`\`${f}\``)),
        ...subFolders(dir)
          .map((s) => `${s}/`)
          .filter((s) => !text.includes(`\`${s}\``)),
      ];
      const stale = [...new Set(mentionedTs(text))].filter((m) => !leadsToFile(dir, m));
      if (missing.length > 0) problems.push(`${dir}/README.md does not name: ${missing.join(', ')}`);
      if (stale.length > 0) problems.push(`${dir}/README.md names what is not there: ${stale.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });
});
