// Counted nouns and articles in messages: "1 policy", "2 policies", "an alert", "a stream pipe".

/** "1 pipe", "2 pipes", "1,200 pipes"; `many` for irregular plurals ("policies"). */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** "a" or "an" before a word, by its first letter (good enough for the words we print). */
export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/** "an alert", "a dashboard". */
export function withArticle(word: string): string {
  return `${article(word)} ${word}`;
}
