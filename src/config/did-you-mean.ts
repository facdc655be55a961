// "did you mean ...?" for unknown keys and names: the closest candidate by edit distance, offered
// only when it is close enough to be a likely typo rather than a different word.

/** Levenshtein distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // one row per character of s: row[j] is the distance of s[0..i) to t[0..j)
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  let last = t.length; // the row's last cell: the answer once every row is done
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    let left = i; // row[j - 1]
    let diag = i - 1; // prev[j - 1]
    for (const [j, up] of prev.slice(1).entries()) {
      left = Math.min(up + 1, left + 1, diag + (s[i - 1] === t[j] ? 0 : 1));
      row.push(left);
      diag = up;
    }
    prev = row;
    last = left;
  }
  return last;
}

/** The closest candidate within a third of the word's length (at least 1, at most 3 edits). */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    const prefix = c.length >= 3 && word.toLowerCase().startsWith(c.toLowerCase());
    const score = prefix ? Math.min(d, limit) : d;
    if (score < bestDistance) {
      best = c;
      bestDistance = score;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** `; did you mean "x"?` to append to a message, or an empty string. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const hit = closest(word, candidates);
  return hit === undefined ? '' : `; did you mean "${hit}"?`;
}
