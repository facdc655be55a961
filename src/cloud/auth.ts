// HTTP Basic auth against the fixtures' keys, and the admin bearer token. Secrets are compared as
// SHA-256 digests with timingSafeEqual, so neither their content nor their length leaks in timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { StoredKey } from './records.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const same = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

export type AuthResult = { ok: true; key: StoredKey } | { ok: false; reason: string };

export class KeyRing {
  private readonly keys = new Map<string, StoredKey & { secretDigest: Buffer }>();
  // An unknown key id still costs one comparison, like a known one.
  private readonly decoy = digest('decoy');

  constructor(keys: readonly { keyId: string; keySecret: string; organizationId: string }[]) {
    for (const k of keys) {
      this.keys.set(k.keyId, { keyId: k.keyId, organizationId: k.organizationId, secretDigest: digest(k.keySecret) });
    }
  }

  authenticate(header: string | undefined): AuthResult {
    if (!header) return { ok: false, reason: 'Missing Authorization header' };
    const token = /^Basic +(\S*)$/i.exec(header.trim())?.[1];
    if (token === undefined) return { ok: false, reason: 'Authorization must use the Basic scheme' };
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return { ok: false, reason: 'Malformed Basic credentials: not base64' };
    const decoded = Buffer.from(token, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) return { ok: false, reason: 'Malformed Basic credentials' };
    const keyId = decoded.slice(0, colon);
    const given = digest(decoded.slice(colon + 1));
    const key = this.keys.get(keyId);
    const match = same(given, key?.secretDigest ?? this.decoy);
    if (!key || !match) return { ok: false, reason: 'Invalid API key' };
    return { ok: true, key: { keyId: key.keyId, organizationId: key.organizationId } };
  }
}

/** True when the header is `Bearer <token>`, compared in constant time. */
export function isAdmin(header: string | undefined, token: string): boolean {
  const m = header ? /^Bearer (.+)$/.exec(header.trim()) : null;
  return same(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}
