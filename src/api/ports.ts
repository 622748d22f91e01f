/** What the HTTP gateway needs from the rest of the system (wired by src/app). */
import type { ClusterView } from '../cluster/engine-status.js';
import type { AuthService, Role, UserRecord } from '../auth/types.js';
import type { Candle, CandleQuery } from '../store/candles.js';
import type { AccountServices } from '../accounts/index.js';
import type { EngineQueries } from '../engine/api.js';
import type { Submit } from '../engine/commands.js';
import type { CommandResult, FillView, OrderView, TpSlView, TradeView } from '../engine/records.js';
import type { FillRole, OrderGroup, OrderStatus, OrderType, Side, TpSlStatus, TpSlType } from '../domain/enums.js';
import type { SignatureVerifier } from '../signing/ports.js';
import type { InstrumentStats } from '../records/market.js';
import type { FundingChangeView } from '../engine/records.js';
import { DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limits.js';
import type {
  BalancePoint, ChartGroup, CloseType, PositionHistorySort, PositionHistoryView, StatisticsPoint,
} from '../store/index.js';
import type { OrderGroupStatus, OrderSort, Page } from '../store/types.js';


/** GET /api/order filters. Arrays are OR-ed; absent = no filter. Times are epoch ms, inclusive bounds. */
export interface OrderQuery {
  userId: number;
  ids?: string[];
  instruments?: string[];
  statuses?: OrderStatus[];
  side?: Side;
  groupStatus?: OrderGroupStatus;
  groups?: OrderGroup[];
  types?: OrderType[];
  /** true = only orders that were triggered (stop / TpSl), false = only never-triggered. */
  triggered?: boolean;
  after?: number;
  before?: number;
  sort: OrderSort;
  offset: number;
  limit: number;
  next?: string;
}

export interface FillQuery {
  userId: number;
  instruments?: string[];
  roles?: FillRole[];
  after: number;
  before: number;
  offset: number;
  limit: number;
  next?: string;
}

export interface FundingTransferQuery {
  userId: number;
  after?: number;
  before?: number;
  offset: number;
  limit: number;
  next?: string;
}

/** GET /api/position/history filters; times are epoch ms, inclusive bounds. */
export interface PositionHistoryQuery {
  userId: number;
  instruments?: string[];
  closeTypes?: CloseType[];
  side?: Side;
  openAfter?: number;
  openBefore?: number;
  closeAfter?: number;
  closeBefore?: number;
  sort: PositionHistorySort;
  offset: number;
  limit: number;
  next?: string;
}

/** Bucketed window: [after, before) in epoch ms, UTC periods of `group`. */
export interface ChartQuery {
  userId: number;
  after: number;
  before: number;
  group: ChartGroup;
}

export interface TpSlQuery {
  userId: number;
  instruments?: string[];
  statuses?: TpSlStatus[];
  type?: TpSlType;
  triggeredOrders?: string[];
  offset: number;
  limit: number;
}

/**
 * History queries served from the read model (src/store). Methods may be sync or async. Results are engine
 * views; the gateway maps them to wire records. Only the owner's rows are ever returned.
 */
export interface HistoryReader {
  listOrders(q: OrderQuery): Page<OrderView> | Promise<Page<OrderView>>;
  /** Any order of the user, including ones the engine no longer holds (v1 or v2 id). */
  getOrder(userId: number, orderId: string): OrderView | undefined | Promise<OrderView | undefined>;
  listFills(q: FillQuery): Page<FillView> | Promise<Page<FillView>>;
  /** Fills of one order of the user, oldest first. */
  orderFills(userId: number, orderId: string): FillView[] | Promise<FillView[]>;
  /** Newest first. */
  recentTrades(instrument: string, limit: number): TradeView[] | Promise<TradeView[]>;
  /** OHLCV candles from the public trades (GET /api/market/{instrument}/candles); absent = route answers 503. */
  candles?(q: CandleQuery): Promise<Candle[]>;
  listTpsl(q: TpSlQuery): Page<TpSlView> | Promise<Page<TpSlView>>;
  /** Collateral movements, newest first (GET /api/user/funding-transfer). */
  fundingTransfers?(q: FundingTransferQuery): Promise<Page<FundingChangeView>>;
  /** Closed position lifetimes (GET /api/position/history). */
  positionHistory?(q: PositionHistoryQuery): Promise<Page<PositionHistoryView>>;
  /** Balance at the end of each period, oldest first. */
  balanceChart?(q: ChartQuery): Promise<BalancePoint[]>;
  /** Fill statistics per period, oldest first. */
  statistics?(q: ChartQuery): Promise<StatisticsPoint[]>;
  /** TpSl attached to these orders (any status), keyed by the ids as given. */
  tpslForOrders?(userId: number, orderIds: readonly string[]): Promise<Map<string, TpSlView[]>>;
  /** Rolling 24h stats and funding for `fields=metrics` and the instruments channel (optional). */
  instrumentStats?(instrument: string): InstrumentStats | undefined | Promise<InstrumentStats | undefined>;
}

/** Limits on how long a client may take; each non-zero, so a slow or silent client cannot hold a socket open. */
export interface HttpTimeouts {
  /** From a request's start until its headers are in, ms. */
  headersMs: number;
  /** From a request's start until the whole request (headers and body) is in, ms. */
  requestMs: number;
  /** Socket inactivity while a request is open (e.g. a body that stops arriving), ms. */
  connectionMs: number;
  /** Idle time allowed between two requests on a keep-alive connection, ms. */
  keepAliveMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, connectionMs: 60_000, keepAliveMs: 72_000 };

export interface ApiConfig {
  /** Max request body, bytes (→ 413). Default 256 KiB. */
  bodyLimit: number;
  timeouts: HttpTimeouts;
  /** Request budgets per IP and per credential (src/api/rate-limits.ts). */
  rateLimits: RateLimits;
  /** Paged lists: default and max page size. */
  pageDefault: number;
  pageMax: number;
  /** Faucet: amount credited per call (decimal string) and cooldown per user (ms). 0 = faucet off. */
  faucetAmount: string;
  faucetCooldownMs: number;
  /** Matcher fee schedule shown by GET /api/market (decimal fractions). */
  fees: { maker: string; taker: string; liquidation: string };
  /** Max recent trades per request. */
  recentTradesMax: number;
}

export const DEFAULT_API_CONFIG: ApiConfig = {
  bodyLimit: 256 * 1024,
  timeouts: DEFAULT_HTTP_TIMEOUTS,
  rateLimits: DEFAULT_RATE_LIMITS,
  pageDefault: 50,
  pageMax: 500,
  faucetAmount: '10000',
  faucetCooldownMs: 24 * 3600_000,
  fees: { maker: '0.0002', taker: '0.0005', liquidation: '0.0075' },
  recentTradesMax: 500,
};

/** Process-level facts for GET /api/admin/status (the engine's own state is read by the route). */
export interface ExchangeStatus {
  startedAt: number;
  /** running | stopping | stopped | failed */
  sequencer: string;
  lastSnapshotSeq: number;
  /** Commands applied since start, by kind. */
  commandsByKind: Record<string, number>;
  realtime: { connections: number; subscriptions: number };
  /**
   * Money identity terms (decimal strings of 1e-8 units):
   * balances + fees + reserveFund − openCost = deposits − withdrawals (openCost: signed cost of open
   * positions, + longs − shorts; see engine/invariants.ts).
   */
  ledger: { deposits: string; withdrawals: string; balances: string; fees: string; reserveFund: string; openCost: string };
  /** History read model: last seq projected, and whether projection is failing (history then answers 503). */
  readModel?: { projectedSeq: number; state: 'current' | 'retrying' | 'stopped'; error?: string };
  marketMakers: number;
  /** Where this process's start-up time went. */
  startup?: StartupStatus;
}

/** Start-up breakdown: engine recovery (snapshot + journal tail), read-model catch-up, HTTP listen. */
export interface StartupStatus {
  /** From startExchange() being called to the server listening. */
  totalMs: number;
  /** Snapshot the engine was restored from (0 = none: the whole journal was replayed). */
  snapshotSeq: number;
  /** Journal commands replayed after that snapshot. */
  replayed: number;
  snapshotReadMs: number;
  snapshotRestoreMs: number;
  replayMs: number;
  /** Newer snapshots that failed verification and were skipped, newest first. */
  skippedSnapshots: Array<{ seq: number; reason: string }>;
  /** Read model: last seq it had at start, batches projected to catch up, and the wait for them after the replay. */
  readModel: { fromSeq: number; projected: number; catchUpMs: number };
  /** Wiring auth, HTTP, real-time, demo accounts and feeds until the port listens. */
  listenMs: number;
}

/** Operator capabilities beyond the command path; present = /api/admin/* is served. */
export interface AdminDeps {
  /** Secret accepted in `x-operator-token` (admin users may use their JWT instead). */
  operatorToken: string;
  setRole(exchangeId: number, role: Role): Promise<UserRecord>;
  /** Takes an engine snapshot now; resolves with its seq once stored. */
  snapshotNow(): Promise<number>;
  /** A durable seq and the engine's state hash at it (for `perpx verify-journal --url`). */
  checkpoint(): Promise<{ seq: number; stateHash: string }>;
  status(): Promise<ExchangeStatus>;
  /** A cluster gateway's view of the engines and the lease (GET /api/admin/cluster); absent in a single process. */
  cluster?: () => Promise<ClusterView>;
}

export interface ApiDeps {
  /** Live state reads (the engine itself, or a cluster gateway's follower); commands go through `submit`. */
  engine: EngineQueries;
  submit: Submit;
  auth: AuthService;
  verifier: SignatureVerifier;
  /** The chain id wallets sign with (decimal string, e.g. "16182"). */
  chainId: string;
  /** Prefix of the real-time channel names ({env}:{name}); default futures-perp-dev. */
  channelEnv?: string;
  /** Funding settles at multiples of this since the epoch (0 = no funding); told to clients by GET /api/config. */
  fundingIntervalMs?: number;
  readStore?: HistoryReader;
  /** Wall clock (ms). Only used for request-time rules (order-id date window, faucet cooldown). */
  clock: () => number;
  config?: Partial<ApiConfig>;
  /** Operator index push (admin route); absent = route answers 409. */
  indexPush?: (instrument: string, price: number) => Promise<number>;
  /** Fresh unique id (transfer ids of faucet/withdraw commands). Default crypto.randomUUID. */
  newId?: () => string;
  admin?: AdminDeps;
  /** Prometheus exposition for GET /metrics; absent = no /metrics route. */
  metrics?: { contentType: string; render(): Promise<string> };
  /** Profiles, statistics, trade signals, mobile-app rules; their routes are served only when present. */
  accounts?: AccountServices;
  /** Websocket connect tokens for the public channels (GET /api/dx-feed/auth); absent = that route is not served. */
  marketDataTokens?: MarketDataTokenIssuer;
}

/** Issues market-data tokens: read-only, public channels only (src/auth/market-data-tokens.ts). */
export interface MarketDataTokenIssuer {
  /** A token for the user and its expiry (ms). */
  issue(userId: string): Promise<{ token: string; expiresAt: number }>;
}
