// count() and withArticle(): the words of every "1 policy" and "an alert" the CLI prints.
import { describe, expect, it } from 'vitest';
import { article, count, withArticle } from '../../src/policy/words.js';

describe('words', () => {
  it('counts a noun in the singular for one, the plural otherwise', () => {
    expect(count(1, 'policy', 'policies')).toBe('1 policy');
    expect(count(0, 'policy', 'policies')).toBe('0 policies');
    expect(count(2, 'pipe')).toBe('2 pipes');
    expect(count(1200, 'pipe')).toBe('1,200 pipes');
  });

  it('puts "an" before a vowel and "a" before anything else', () => {
    expect(withArticle('alert')).toBe('an alert');
    expect(withArticle('objectStorage')).toBe('an objectStorage');
    expect(withArticle('dashboard')).toBe('a dashboard');
    expect(article('stream')).toBe('a');
  });
});
