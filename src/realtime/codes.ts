// Centrifugo protocol codes. The centrifuge JS client (v5) acts on their ranges, so the
// ranges matter more than the exact numbers:
// - reply error codes < 100, 109 (token expired) or `temporary: true` make a subscription retry
//   with backoff; any other code ends the subscription (client state "unsubscribed").
// - unsubscribe push codes < 2500 end the subscription; >= 2500 make the client resubscribe
//   (2502 additionally discards the client's recovery position, so we avoid it).
// - disconnect codes 3000-3499 and 4000-4499 → the client reconnects;
//   3500-3999 and 4500-4999 → it stays disconnected (terminal).

/** Error codes of command replies (`{ id, error: { code, message, temporary? } }`). */
export const ErrorCode = {
  internal: 100,
  unauthorized: 101,
  unknownChannel: 102,
  permissionDenied: 103,
  methodNotFound: 104,
  alreadySubscribed: 105,
  limitExceeded: 106,
  badRequest: 107,
  notAvailable: 108,
  tokenExpired: 109,
  expired: 110,
  tooManyRequests: 111,
  unrecoverablePosition: 112,
} as const;

export interface ProtocolError {
  code: number;
  message: string;
  temporary?: boolean;
}

export const Errors = {
  internal: { code: ErrorCode.internal, message: 'internal server error', temporary: true },
  unauthorized: { code: ErrorCode.unauthorized, message: 'unauthorized' },
  unknownChannel: { code: ErrorCode.unknownChannel, message: 'unknown channel' },
  permissionDenied: { code: ErrorCode.permissionDenied, message: 'permission denied' },
  methodNotFound: { code: ErrorCode.methodNotFound, message: 'method not found' },
  alreadySubscribed: { code: ErrorCode.alreadySubscribed, message: 'already subscribed' },
  badRequest: { code: ErrorCode.badRequest, message: 'bad request' },
  notAvailable: { code: ErrorCode.notAvailable, message: 'not available' },
  tokenExpired: { code: ErrorCode.tokenExpired, message: 'token expired' },
  unrecoverablePosition: { code: ErrorCode.unrecoverablePosition, message: 'unrecoverable position' },
  // Temporary, as in Centrifugo: a refused subscribe is retried with backoff.
  tooManyRequests: { code: ErrorCode.tooManyRequests, message: 'too many requests', temporary: true },
  sessionEnded: { code: ErrorCode.permissionDenied, message: 'session ended' },
} satisfies Record<string, ProtocolError>;

/** Codes of the websocket close frame / disconnect push. Same values as Centrifugo. */
export const DisconnectCode = {
  // 3000-3499: the client reconnects.
  connectionClosed: 3000,
  shutdown: 3001,
  serverError: 3004,
  expired: 3005,
  slow: 3008,
  writeError: 3009,
  insufficientState: 3010,
  forceReconnect: 3011,
  noPong: 3012,
  tooManyRequests: 3013,
  // 3500-3999: terminal, the client does not reconnect.
  invalidToken: 3500,
  badRequest: 3501,
  stale: 3502,
  forceNoReconnect: 3503,
  connectionLimit: 3504,
  permissionDenied: 3507,
  notAvailable: 3508,
} as const;

export interface Disconnect {
  code: number;
  reason: string;
}

export const Disconnects = {
  shutdown: { code: DisconnectCode.shutdown, reason: 'shutdown' },
  slow: { code: DisconnectCode.slow, reason: 'slow' },
  noPong: { code: DisconnectCode.noPong, reason: 'no pong' },
  stale: { code: DisconnectCode.stale, reason: 'stale' },
  badRequest: { code: DisconnectCode.badRequest, reason: 'bad request' },
  serverError: { code: DisconnectCode.serverError, reason: 'internal server error' },
  tooManyRequests: { code: DisconnectCode.tooManyRequests, reason: 'too many requests' },
  invalidToken: { code: DisconnectCode.invalidToken, reason: 'invalid token' },
} satisfies Record<string, Disconnect>;

/** True when the centrifuge client reconnects after this disconnect code. */
export function clientReconnects(code: number): boolean {
  return !((code >= 3500 && code < 4000) || (code >= 4500 && code < 5000));
}

/** Codes of the unsubscribe push (`{ push: { channel, unsubscribe: { code, reason } } }`). */
export const UnsubscribeCode = {
  /** Terminal: the client's subscription goes to "unsubscribed" and is not resubscribed (with the same
   *  data) until the app subscribes again. Also used when the session behind the subscription ended. */
  server: 2000,
  /** >= 2500: the client resubscribes at once (calling its getData again), keeping its
   *  recovery position. Used when a channel authorization expires. */
  expired: 2501,
} as const;
