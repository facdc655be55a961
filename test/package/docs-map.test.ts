// The README is a front door and docs/ the rooms behind it: the README stays short (at most 250
// lines), links every page of docs/, and every relative link of the README and of docs/*.md leads
// to a file that exists and, for a link into a Markdown file, to a heading it has (GitHub's anchor
// of it). No paragraph of some length stands on two pages: each subject has one place.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const PAGES = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`)
    .sort(),
];

/** The text outside fenced code blocks, so that a `# comment` in a block is no heading. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated one gets -1, -2... as on GitHub. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a Markdown file (inline links and images), code left out. */
function relativeLinks(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8')).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Where a link of `file` leads: the path from the repository's root, and its anchor. */
function resolveLink(file: string, target: string): { path: string; anchor: string | undefined } {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  return { path: path === '' ? file : normalize(join(dirname(file), decodeURI(path))), anchor };
}

describe('the README and docs/', () => {
  it('the README is at most 250 lines', () => {
    const lines = readFileSync('README.md', 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(250);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(relativeLinks('README.md').map((t) => resolveLink('README.md', t).path));
    expect(PAGES.filter((p) => p !== 'README.md' && !linked.has(p))).toEqual([]);
  });

  it('every relative link of the README and docs/ leads to a file, and to a heading of it', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of PAGES)
      for (const target of relativeLinks(file)) {
        checked++;
        const { path, anchor } = resolveLink(file, target);
        if (!existsSync(path)) broken.push(`${file}: ${target} (no ${path})`);
        else if (anchor !== undefined && path.endsWith('.md') && !anchors(path).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${path})`);
      }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('no paragraph of 160 characters or more stands on two pages', () => {
    const where = new Map<string, string>();
    const repeated: string[] = [];
    for (const file of PAGES)
      for (const block of readFileSync(file, 'utf8').split(/\n\s*\n/)) {
        const paragraph = block.replace(/\s+/g, ' ').trim();
        if (paragraph.length < 160) continue;
        const first = where.get(paragraph);
        if (first !== undefined && first !== file) repeated.push(`${first} and ${file}: ${paragraph.slice(0, 80)}...`);
        else where.set(paragraph, file);
      }
    expect(repeated).toEqual([]);
  });
});
