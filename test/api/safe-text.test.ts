// Foreign texts made safe to keep and to show: bounded, printable on one line, URLs without credentials.
import { describe, expect, it } from 'vitest';
import { bounded, boundedTexts, MAX_TEXT, printable, safeUrl } from '../../src/api/internal.js';

describe('printable', () => {
  it('removes escape sequences and turns other controls into spaces', () => {
    expect(printable('\u001b[2J\u001b[1;1Hok')).toBe('ok');
    expect(printable('title\u001b]0;pwned\u0007 done')).toBe('title done');
    expect(printable('copy\u001b]52;c;aGVsbG8=\u001b\\ end')).toBe('copy end');
    expect(printable('8-bit\u009b31m red')).toBe('8-bit red');
    expect(printable('line\nforged\rrow\ttab\u0000nul\u007fdel')).toBe('line forged row tab nul del');
    expect(printable('evil\u202etxt.exe')).toBe('evil txt.exe');
    expect(printable('Grüße, 東京 ✓')).toBe('Grüße, 東京 ✓');
  });
});

describe('bounded', () => {
  it('keeps a short text and cuts a long one, saying how much', () => {
    expect(bounded('short')).toBe('short');
    const cut = bounded('x'.repeat(3_000_000));
    expect(cut.length).toBeLessThan(MAX_TEXT + 40);
    expect(cut).toMatch(/\.\.\. \(2998000 more characters\)$/);
    // never half a surrogate pair
    expect(bounded(`${'a'.repeat(9)}😀tail`, 10)).toBe(`${'a'.repeat(9)}... (6 more characters)`);
  });

  it('bounds every text inside a value and leaves the rest as it is', () => {
    const value = { code: 'API_SERVER_ERROR', at: 5, message: 'e'.repeat(5_000), list: ['f'.repeat(5_000), 1, null] };
    const out = boundedTexts(value);
    expect(out.code).toBe('API_SERVER_ERROR');
    expect(out.at).toBe(5);
    expect(out.message.length).toBeLessThan(MAX_TEXT + 40);
    expect((out.list[0] as string).length).toBeLessThan(MAX_TEXT + 40);
    expect(out.list.slice(1)).toEqual([1, null]);
  });
});

describe('safeUrl', () => {
  it('drops userinfo and masks credential-like query values', () => {
    expect(safeUrl('http://user:pa55w0rd@prom.internal:9090')).toBe('http://***@prom.internal:9090/');
    expect(safeUrl('https://api.example.com/v1?token=abc123&region=eu')).toBe(
      'https://api.example.com/v1?token=***&region=eu',
    );
    expect(safeUrl('https://api.example.com')).toBe('https://api.example.com');
    expect(safeUrl('embedded')).toBe('embedded');
    expect(safeUrl('redis+sentinel://:pw@a:26379,b:26379/m')).toBe('redis+sentinel://***@a:26379,b:26379/m');
  });
});
