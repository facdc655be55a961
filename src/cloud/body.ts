// JSON bodies only. A malformed or non-JSON body is not refused while parsing but kept as a
// deferred error, so the route answers in the platform's order (404 for an unknown pipe comes
// before 400 for its body). The 1 MB limit is enforced by fastify while reading (413).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CloudHttpError } from './errors.js';

export const BODY_LIMIT = 1024 * 1024;
// JSON.parse copes with any depth under 1 MB, but JSON.stringify and structuredClone recurse: a
// stored dashboard nested ~5,000 deep made every later list of its service a 500. No body of the
// API comes near this depth.
export const MAX_BODY_DEPTH = 64;

/** How deep the arrays and objects of a JSON text nest (strings skipped). */
export function jsonDepth(s: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

class DeferredBodyError {
  constructor(readonly error: CloudHttpError) {}
}

export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_req, text, done) => {
      const s = String(text);
      if (s.trim() === '') {
        done(null, undefined);
        return;
      }
      if (jsonDepth(s) > MAX_BODY_DEPTH) {
        done(null, new DeferredBodyError(new CloudHttpError(400, `body nests deeper than ${MAX_BODY_DEPTH} levels`)));
        return;
      }
      try {
        done(null, JSON.parse(s));
      } catch (err) {
        done(null, new DeferredBodyError(new CloudHttpError(400, `Malformed JSON body: ${(err as Error).message}`)));
      }
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (req, buf, done) => {
    const len = (buf as Buffer).length;
    if (len === 0) {
      done(null, undefined);
      return;
    }
    const type = req.headers['content-type'] ?? '(none)';
    done(null, new DeferredBodyError(new CloudHttpError(415, `Content-Type must be application/json, got ${type}`)));
  });
}

/** The request's JSON body, or throw the error kept while parsing it. */
export function readBody(req: FastifyRequest): unknown {
  if (req.body instanceof DeferredBodyError) throw req.body.error;
  return req.body;
}
