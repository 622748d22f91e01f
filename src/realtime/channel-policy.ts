/**
 * The channel policy the real-time server asks before a subscription: which `{env}:{name}` channels exist,
 * who may subscribe (per-user channels need an access token of that user) and which channels keep history
 * for recovery. Kept apart from the publishing side (channels.ts), so the server can be built with its
 * policy before the channels that publish through it.
 */
import type { AuthService } from '../auth/types.js';
import { ORDER_BOOK_GROUPINGS } from '../domain/enums.js';
import type { ExchangeEngine } from '../engine/api.js';
import type { Authorization, Authorize, CheckConnectToken, HistoryPolicy, HistoryPolicyFor } from './ports.js';
import { ErrorCode } from './codes.js';

export const USER_CHANNELS = ['user', 'funding', 'transfer-update', 'position', 'order', 'orderFills', 'order-fee', 'tpsl'] as const;
export const PUBLIC_CHANNELS = ['heartbeat', 'info', 'instruments', 'coin-price', 'funding-rate'] as const;
/** Per-instrument trade channels, `{name}-{instrument}`; order books are `orderBook-{instrument}-{suffix}`. */
export const INSTRUMENT_CHANNELS = ['recent-trade', 'trade'] as const;
export const BOOK_SUFFIXES = [...ORDER_BOOK_GROUPINGS, 'best'] as const;
/** Public channels that keep history like the per-user ones. */
export const RECOVERABLE_PUBLIC_CHANNELS: ReadonlyArray<(typeof PUBLIC_CHANNELS)[number]> = ['funding-rate'];

/** History kept by recoverable channels (per-user channels and funding-rate). */
export const RECOVERABLE_HISTORY: HistoryPolicy = { size: 1000, ttlMs: 600_000 };
/** Price levels per side sent on orderBook channels. */
export const BOOK_CHANNEL_LEVELS = 50;

/** `a|b|c` of literal names (a grouping like `0.1` has a dot). */
const alternatives = (names: readonly string[]) => names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
const USER_RE = new RegExp(`^(${alternatives(USER_CHANNELS)})-(\\d+)$`);
const BOOK_RE = new RegExp(`^orderBook-([A-Za-z0-9_]+)-(${alternatives(BOOK_SUFFIXES)})$`);
const TRADE_RE = new RegExp(`^(${alternatives(INSTRUMENT_CHANNELS)})-([A-Za-z0-9_]+)$`);

export type ParsedChannel =
  | { kind: 'public'; name: string }
  | { kind: 'user'; name: string; exchangeId: number }
  | { kind: 'instrument'; name: string; instrument: string }
  | { kind: 'unknown' };

/** Parses `{env}:{name}`; anything outside the contract is `unknown`. */
export function parseChannel(env: string, channel: string): ParsedChannel {
  const prefix = `${env}:`;
  if (!channel.startsWith(prefix)) return { kind: 'unknown' };
  const name = channel.slice(prefix.length);
  if ((PUBLIC_CHANNELS as readonly string[]).includes(name)) return { kind: 'public', name };
  let m = USER_RE.exec(name);
  if (m) {
    const exchangeId = Number(m[2]);
    return Number.isSafeInteger(exchangeId) ? { kind: 'user', name, exchangeId } : { kind: 'unknown' };
  }
  m = BOOK_RE.exec(name);
  if (m) return { kind: 'instrument', name, instrument: m[1] };
  m = TRADE_RE.exec(name);
  if (m) return { kind: 'instrument', name, instrument: m[2] };
  return { kind: 'unknown' };
}

/** Reads a JWT's `exp` (seconds) without verifying it: only used to tell "expired" from "invalid". */
function unverifiedExpiryMs(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export interface ChannelPolicyOptions {
  /** Channel prefix, e.g. `futures-perp-dev`. */
  env: string;
  engine: Pick<ExchangeEngine, 'instrumentConfig'>;
  auth: Pick<AuthService, 'verifyAccessToken'>;
  now?: () => number;
}

export class ChannelPolicy {
  private readonly env: string;
  private readonly engine: Pick<ExchangeEngine, 'instrumentConfig'>;
  private readonly auth: Pick<AuthService, 'verifyAccessToken'>;
  private readonly now: () => number;

  constructor(opts: ChannelPolicyOptions) {
    this.env = opts.env;
    this.engine = opts.engine;
    this.auth = opts.auth;
    this.now = opts.now ?? Date.now;
  }

  /** May this client subscribe to `channel` with this subscribe data? */
  /** A connect token is an access token: valid, expired (109, the client fetches another) or invalid (3500). */
  readonly checkConnectToken: CheckConnectToken = async (token) => {
    if (await this.auth.verifyAccessToken(token)) return 'valid';
    const exp = unverifiedExpiryMs(token);
    return exp !== undefined && exp <= this.now() ? 'expired' : 'invalid';
  };

  readonly authorize: Authorize = async (channel, data, client): Promise<Authorization> => {
    const p = parseChannel(this.env, channel);
    switch (p.kind) {
      case 'unknown':
        return { allowed: false, code: ErrorCode.unknownChannel, message: 'unknown channel' };
      case 'public':
        return { allowed: true };
      case 'instrument':
        return this.engine.instrumentConfig(p.instrument)
          ? { allowed: true }
          : { allowed: false, code: ErrorCode.unknownChannel, message: 'unknown instrument' };
      case 'user': {
        // The subscribe's own token, else the one the connection was opened with (centrifuge-js `token`).
        const own = typeof data === 'object' && data !== null ? (data as { accessToken?: unknown }).accessToken : undefined;
        const token = own ?? client.connectToken;
        if (typeof token !== 'string' || token === '') {
          return { allowed: false, code: ErrorCode.permissionDenied, message: 'accessToken required' };
        }
        const verified = await this.auth.verifyAccessToken(token);
        if (!verified) {
          const exp = unverifiedExpiryMs(token);
          if (exp !== undefined && exp <= this.now()) {
            return { allowed: false, code: ErrorCode.expired, message: 'token expired', temporary: true };
          }
          return { allowed: false, code: ErrorCode.permissionDenied, message: 'permission denied' };
        }
        if (verified.user.exchangeId !== p.exchangeId) {
          return { allowed: false, code: ErrorCode.permissionDenied, message: 'permission denied' };
        }
        // Authorized once, the subscription lives while its session does (a bot that only listens never
        // refreshes): it ends at the session's expiry, or earlier by RealtimeServer.endSession on revocation.
        return { allowed: true, expiresAt: verified.sessionExpiresAt, sessionId: verified.sessionId };
      }
    }
  };

  readonly historyFor: HistoryPolicyFor = (channel) => {
    const p = parseChannel(this.env, channel);
    if (p.kind === 'user' || (p.kind === 'public' && (RECOVERABLE_PUBLIC_CHANNELS as readonly string[]).includes(p.name))) return RECOVERABLE_HISTORY;
    return null;
  };
}
