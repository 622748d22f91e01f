/**
 * JSON body parser. Same as Fastify's (prototype-poisoning protection, body limit), except that an empty
 * body is accepted as "no body": public clients send `Content-Type: application/json` with no body on
 * POST /auth/refresh. Routes that need a body still fail schema validation with a 400.
 */
import type { FastifyInstance } from 'fastify';

const NON_BLANK = /\S/;

export function installJsonParser(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // Same test as `text.trim() === ''` (\s is trim's whitespace set) without copying the body.
    if (!NON_BLANK.test(text)) return done(null, undefined);
    return parse(req, text, done);
  });
}
