/**
 * Error shape and mapping: every failure leaves as `{ error: { code, message } }` with a 4xx status, or a
 * 503 for a temporary server condition (shutting down, journal or storage unavailable, read model behind).
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthError } from '../auth/types.js';
import { LeaderRefusedError, LeaderUnavailableError } from '../cluster/errors.js';
import { SequencerStoppedError } from '../sequencer/sequencer.js';
import { JournalWriteError } from '../journal/ports.js';
import type { CommandError } from '../engine/records.js';
import { databaseUnreachable } from '../store/pg-pool.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  static from(e: CommandError): ApiError {
    return new ApiError(e.status, e.code, e.message);
  }
}

export const badRequest = (code: string, message: string) => new ApiError(400, code, message);
export const notFound = (code: string, message: string) => new ApiError(404, code, message);
export const unauthorized = (message = 'Missing, invalid or expired credentials') => new ApiError(401, 'UNAUTHORIZED', message);

/** Fastify's own error codes → our codes (status comes from the error). */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_CONTENT_LENGTH',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_VALIDATION: 'VALIDATION_ERROR',
};

/** Error codes of a full or failing disk (better-sqlite3's SqliteError codes, Node's errno codes). */
const STORAGE_CODES = /^(SQLITE_FULL|SQLITE_IOERR.*|ENOSPC|EDQUOT|EIO|EROFS)$/;

/** The storage code of `err` or of an error it wraps (cause chain), if it is a full or failing disk. */
export function storageFailureCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && STORAGE_CODES.test(code)) return code;
  }
  return undefined;
}

function send(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/**
 * Fastify's `frameworkErrors` option: errors its router raises before any route (and so before the error
 * handler) runs. Without it they leave in Fastify's own shape (`{ error: "Bad Request", code, message,
 * statusCode }`), where `error` is a string.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_BAD_URL') {
    void send(reply, 400, 'INVALID_URL', 'Invalid URL: a path segment is not a valid percent-encoded component');
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void send(reply, 414, 'URI_TOO_LONG', 'Invalid URL: a path parameter is longer than allowed');
  } else {
    void sendFastifyError(err, request, reply);
  }
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before there is a request (a request whose
 * headers or body did not arrive in time, oversized headers, malformed HTTP), in our shape; then the socket closes.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time']
    : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'HEADERS_TOO_LARGE', 'Request headers are too large']
    : [400, 'BAD_REQUEST', 'Malformed HTTP request'];
  const body = JSON.stringify({ error: { code, message } });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** Any other Fastify error: its 4xx status with our code for it, else a 500 (a bug: logged, nothing internal told). */
function sendFastifyError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return send(reply, status, FASTIFY_CODES[err.code] ?? (err.code || 'BAD_REQUEST'), err.message);
  request.log.error({ err }, 'unhandled error');
  return send(reply, 500, 'INTERNAL_ERROR', 'Internal server error');
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      // 503s here are temporary (read model behind, storage unavailable): tell clients when to retry.
      if (err.status === 503) reply.header('retry-after', '1');
      return send(reply, err.status, err.code, err.message);
    }
    if (err instanceof AuthError) return send(reply, err.status, err.code, err.message);
    if (err instanceof JournalWriteError) {
      // Fail-stop: the journal cannot write, so nothing more is acknowledged; the process exits and the
      // operator frees space and restarts (recovery replays the journal).
      request.log.error({ err }, 'command refused: journal write failed');
      reply.header('retry-after', '5').header('connection', 'close');
      return send(reply, 503, 'JOURNAL_UNAVAILABLE',
        `The exchange cannot store commands (${err.code ?? 'journal write failed'}); this command was not acknowledged and the exchange is stopping`);
    }
    const storage = storageFailureCode(err);
    if (storage) {
      // E.g. the auth database's disk is full: sign-in and refresh cannot store a session. Not a bug to hide
      // behind a 500: a temporary condition the operator fixes by freeing space.
      request.log.error({ err }, 'storage failure');
      reply.header('retry-after', '5');
      return send(reply, 503, 'STORAGE_UNAVAILABLE', `The server cannot write its data (${storage}); try again later`);
    }
    const unreachable = databaseUnreachable(err);
    if (unreachable) {
      // E.g. PostgreSQL restarting under a cluster's gateways: sign-in and history wait for it, trading goes on.
      request.log.error({ err }, 'database unreachable');
      reply.header('retry-after', '1');
      return send(reply, 503, 'DATABASE_UNAVAILABLE', `The server cannot reach its database (${unreachable}); try again shortly`);
    }
    if (err instanceof SequencerStoppedError) {
      // Only a request that outlived the stop's grace period gets here: nothing was applied, retry elsewhere.
      reply.header('retry-after', '1').header('connection', 'close');
      return send(reply, 503, 'SHUTTING_DOWN', 'The exchange is stopping; the command was not accepted');
    }
    if (err instanceof LeaderUnavailableError || (err instanceof LeaderRefusedError && err.code !== 'BAD_COMMAND')) {
      // Cluster mode: no engine leader took the command (failover, restart); the message says whether it may have been applied.
      request.log.warn({ err }, 'command not taken by the engine leader');
      reply.header('retry-after', '1');
      return send(reply, 503, err instanceof LeaderRefusedError ? err.code : 'LEADER_UNAVAILABLE', err.message);
    }
    const fe = err as FastifyError;
    if (fe.validation || fe.code === 'FST_ERR_VALIDATION') return send(reply, 400, 'VALIDATION_ERROR', fe.message);
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return send(reply, 413, 'PAYLOAD_TOO_LARGE', `Request body is larger than ${bodyLimit} bytes`);
    }
    if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return send(reply, 400, 'INVALID_JSON', `Request body is not valid JSON: ${err.message}`);
    }
    return sendFastifyError(fe, request, reply);
  });
  app.setNotFoundHandler((request, reply) => send(reply, 404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
}
