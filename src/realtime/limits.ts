// Abuse limits of the websocket: how many connections (in total, per client IP), how fast an IP may open
// them, and how fast one connection may send commands. Token buckets are limiter's (sync tryRemoveTokens);
// per-IP state lives in bounded LRU caches so a spray of addresses cannot grow memory without end.
import { TokenBucket } from 'limiter';
import { LRUCache } from 'lru-cache';

/** A sustained rate with a burst allowance; either 0 = no limit. */
export interface Rate {
  perSecond: number;
  burst: number;
}

/** Every member optional; absent or 0 = no limit (the app supplies production values from its config). */
export interface RealtimeLimits {
  /** Open websocket connections over all clients; further upgrades are answered 503. */
  maxConnections?: number;
  /** Open websocket connections per client IP; further upgrades are answered 429. */
  maxConnectionsPerIp?: number;
  /** New websocket connections per client IP (the connect command comes once per connection). 429 beyond. */
  connectsPerIp?: Rate;
  /** Every message one connection sends (commands and pongs). A command beyond gets error 111. */
  messages?: Rate;
  /** subscribe commands per connection (each one verifies a token and may read history). 111 beyond. */
  subscribes?: Rate;
  /** history commands per connection (each one reads up to maxRecoveredPublications). 111 beyond. */
  histories?: Rate;
  /** Refusals (111) one connection may collect per minute; one more disconnects it with 3013. */
  maxRefusalsPerMinute?: number;
}

function isLimited(rate: Rate | undefined): rate is Rate {
  return rate !== undefined && rate.perSecond > 0 && rate.burst > 0;
}

/** A bucket that starts full: a new client gets its burst at once (limiter's buckets start empty). */
function fullBucket(burst: number, tokensPerInterval: number, intervalMs: number): TokenBucket {
  const bucket = new TokenBucket({ bucketSize: burst, tokensPerInterval, interval: intervalMs });
  bucket.content = burst;
  return bucket;
}

const perSecond = (rate: Rate) => fullBucket(rate.burst, rate.perSecond, 1000);

export type ClientCommandKind = 'subscribe' | 'history' | 'other';
/** ok: serve it; refuse: answer 111; disconnect: the connection keeps going after many refusals (3013). */
export type Verdict = 'ok' | 'refuse' | 'disconnect';

/** One connection's command budget. */
export class CommandLimiter {
  private constructor(
    private readonly messages: TokenBucket | null,
    private readonly subscribes: TokenBucket | null,
    private readonly histories: TokenBucket | null,
    private readonly refusals: TokenBucket | null,
  ) {}

  /** null when no per-connection limit is configured (nothing to count). */
  static create(limits: RealtimeLimits): CommandLimiter | null {
    const { messages, subscribes, histories, maxRefusalsPerMinute = 0 } = limits;
    if (!isLimited(messages) && !isLimited(subscribes) && !isLimited(histories)) return null;
    const refusals = maxRefusalsPerMinute > 0 ? fullBucket(maxRefusalsPerMinute, maxRefusalsPerMinute, 60_000) : null;
    const make = (r: Rate | undefined) => (isLimited(r) ? perSecond(r) : null);
    return new CommandLimiter(make(messages), make(subscribes), make(histories), refusals);
  }

  check(kind: ClientCommandKind): Verdict {
    const specific = kind === 'subscribe' ? this.subscribes : kind === 'history' ? this.histories : null;
    if ((!this.messages || this.messages.tryRemoveTokens(1)) && (!specific || specific.tryRemoveTokens(1))) return 'ok';
    return this.refusals && !this.refusals.tryRemoveTokens(1) ? 'disconnect' : 'refuse';
  }
}

export type Admission = { ok: true; release: () => void } | { ok: false; status: 429 | 503; reason: string };

/** Admits websocket upgrades: connection caps (total, per IP) and the per-IP rate of new connections. */
export class ConnectionGate {
  private total = 0;
  private readonly perIp = new Map<string, number>();
  private readonly connectBuckets: LRUCache<string, TokenBucket> | null;

  constructor(private readonly limits: RealtimeLimits) {
    const rate = limits.connectsPerIp;
    // An IP idle long enough to refill its bucket may be forgotten: it would be full again anyway.
    this.connectBuckets = isLimited(rate)
      ? new LRUCache({ max: 100_000, ttl: Math.ceil((rate.burst / rate.perSecond) * 1000), updateAgeOnGet: true })
      : null;
  }

  get open(): number {
    return this.total;
  }

  admit(ip: string): Admission {
    const { maxConnections = 0, maxConnectionsPerIp = 0 } = this.limits;
    if (maxConnections > 0 && this.total >= maxConnections) return { ok: false, status: 503, reason: 'connection limit' };
    const mine = this.perIp.get(ip) ?? 0;
    if (maxConnectionsPerIp > 0 && mine >= maxConnectionsPerIp) return { ok: false, status: 429, reason: 'too many connections from this address' };
    if (this.connectBuckets) {
      let bucket = this.connectBuckets.get(ip);
      if (!bucket) {
        bucket = perSecond(this.limits.connectsPerIp as Rate);
        this.connectBuckets.set(ip, bucket);
      }
      if (!bucket.tryRemoveTokens(1)) return { ok: false, status: 429, reason: 'too many connection attempts' };
    }
    this.total++;
    this.perIp.set(ip, mine + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const n = (this.perIp.get(ip) ?? 1) - 1;
        if (n > 0) this.perIp.set(ip, n);
        else this.perIp.delete(ip);
      },
    };
  }
}
