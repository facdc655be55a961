// JSON bodies only. A malformed or non-JSON body is not refused while parsing but kept as a
// deferred error, so the route answers in the platform's order (404 for an unknown pipe comes
// before 400 for its body). The 1 MB limit is enforced by fastify while reading (413).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CloudHttpError } from './errors.js';

export const BODY_LIMIT = 1024 * 1024;

class DeferredBodyError {
  constructor(readonly error: CloudHttpError) {}
}

export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, text, done) => {
    const s = String(text);
    if (s.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(s));
    } catch (err) {
      done(null, new DeferredBodyError(new CloudHttpError(400, `Malformed JSON body: ${(err as Error).message}`)));
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (req, buf, done) => {
    const len = (buf as Buffer).length;
    if (len === 0) return done(null, undefined);
    const type = req.headers['content-type'] ?? '(none)';
    done(null, new DeferredBodyError(new CloudHttpError(415, `Content-Type must be application/json, got ${type}`)));
  });
}

/** The request's JSON body, or throw the error kept while parsing it. */
export function readBody(req: FastifyRequest): unknown {
  if (req.body instanceof DeferredBodyError) throw req.body.error;
  return req.body;
}
