/**
 * The real-time channel table the documents are built from: every channel family of src/realtime/channel-policy.ts
 * (its name lists are the keys of the tables below, so a channel added there does not type-check until it is
 * described here) with its payload (the same TypeBox records src/realtime/channels.ts publishes), who may subscribe,
 * history and comparison field. The OpenAPI document carries it as its `x-realtime` extension (OpenAPI has no notion
 * of channels); src/api/asyncapi.ts turns it into the AsyncAPI document.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ORDER_BOOK_GROUPINGS } from '../domain/enums.js';
import {
  INSTRUMENT_CHANNELS, PUBLIC_CHANNELS, RECOVERABLE_HISTORY, RECOVERABLE_PUBLIC_CHANNELS, USER_CHANNELS,
} from '../realtime/channel-policy.js';
import { DEFAULT_WS_PATH } from '../realtime/server.js';
import {
  AccountEventRecord, CoinRecord, DepthRecord, FundingEventRecord, FundingRateEventRecord, InstrumentLiveRecord, OrderFeeEventRecord,
  OrderFillRecord, OrderRecord, PositionRecord, RecentTradeRecord, TpSlRecord, TradeEventRecord, TransferRecord,
} from '../records/index.js';

const IsoTime = Type.String({ description: 'ISO 8601 timestamp' });

/** Payload schemas by component name. */
const PAYLOADS = {
  ChannelHeartbeat: Type.Object({ t: Type.Number({ description: 'server time, ms' }) }),
  ChannelInfo: Type.Object({ state: Type.String({ description: 'active; anything else is a global trading halt' }), updatedAt: IsoTime }),
  ChannelInstrument: InstrumentLiveRecord,
  ChannelCoinPrice: CoinRecord,
  ChannelFundingRate: FundingRateEventRecord,
  ChannelOrderBook: Type.Object({ instrument: Type.String(), orderBook: DepthRecord }),
  ChannelRecentTrade: RecentTradeRecord,
  ChannelTrade: TradeEventRecord,
  ChannelAccount: AccountEventRecord,
  ChannelFunding: FundingEventRecord,
  ChannelTransfer: Type.Object({ ...TransferRecord.properties, exchangeId: Type.Integer() }),
  ChannelPosition: PositionRecord,
  ChannelOrder: OrderRecord,
  ChannelOrderFill: OrderFillRecord,
  ChannelOrderFee: OrderFeeEventRecord,
  ChannelTpSl: TpSlRecord,
} satisfies Record<string, TSchema>;

export type ChannelPayloadName = keyof typeof PAYLOADS;

interface ChannelDoc {
  payload: ChannelPayloadName;
  description: string;
  /** Field clients compare per entity (they drop an update not newer than the last one seen). */
  compare?: string;
}

const PUBLIC_DOCS: Record<(typeof PUBLIC_CHANNELS)[number], ChannelDoc> = {
  heartbeat: { payload: 'ChannelHeartbeat', description: 'every HEARTBEAT_MS; silence over 30 s means the connection is lost' },
  info: { payload: 'ChannelInfo', compare: 'updatedAt', description: 'matcher state snapshot, every HEARTBEAT_MS and on every change' },
  instruments: { payload: 'ChannelInstrument', compare: 'updatedAt (per instrument id)', description: 'live instrument fields on every change' },
  'coin-price': { payload: 'ChannelCoinPrice', description: 'index price of a base coin at every index tick (price = the index)' },
  'funding-rate': { payload: 'ChannelFundingRate', compare: 'createdAt (per instrument)', description: 'rate of each funding settlement' },
};

const INSTRUMENT_DOCS: Record<(typeof INSTRUMENT_CHANNELS)[number], ChannelDoc> = {
  'recent-trade': { payload: 'ChannelRecentTrade', compare: 'createdAt (per instrument)', description: 'every trade, anonymized' },
  trade: { payload: 'ChannelTrade', compare: 'createdAt (per instrument)', description: 'every trade, anonymized, without execution id' },
};

const BOOK_DOCS: Record<'grouped' | 'best', ChannelDoc> = {
  grouped: {
    payload: 'ChannelOrderBook', compare: 'orderBook.t (per instrument)',
    description: 'depth grouped by the price step in the name, at most 50 levels a side, both sides ascending by price; at most one publication per BOOK_PUBLISH_INTERVAL_MS',
  },
  best: { payload: 'ChannelOrderBook', compare: 'orderBook.t (per instrument)', description: 'best bid and ask, same format as depth' },
};

const USER_DOCS: Record<(typeof USER_CHANNELS)[number], ChannelDoc> = {
  user: { payload: 'ChannelAccount', compare: 'updatedAt', description: 'marginCall changes' },
  funding: { payload: 'ChannelFunding', compare: 'updatedAt (per coin)', description: 'collateral balance after each change (quantity is the new balance, a string)' },
  'transfer-update': { payload: 'ChannelTransfer', compare: 'updatedAt (per transfer id)', description: 'deposits and withdrawals at each step' },
  position: { payload: 'ChannelPosition', compare: 'updatedAt (per instrument)', description: 'position changes; a closed position is sent once with quantity 0' },
  order: { payload: 'ChannelOrder', compare: 'updatedAt (per order id)', description: 'order changes (create, fill, replace, cancel, expiry, trigger)' },
  orderFills: { payload: 'ChannelOrderFill', description: 'each fill of your orders' },
  'order-fee': { payload: 'ChannelOrderFee', description: 'fee of each fill (quantity a string)' },
  tpsl: { payload: 'ChannelTpSl', compare: 'updatedAt (per TpSl id)', description: 'TpSl create, modify, cancel, trigger' },
};

export interface ChannelParameter {
  description: string;
  /** The only values the parameter takes, when it is a closed list. */
  enum?: string[];
}

/** One channel family: its name after `{env}:` with `{parameter}` placeholders, and everything a subscriber needs. */
export interface ChannelSpec extends ChannelDoc {
  name: string;
  parameters: Record<string, ChannelParameter>;
  /** public: anyone, no subscribe data; owner: subscribe data `{ accessToken }` of the user whose exchangeId is in the name. */
  access: 'public' | 'owner';
  /** Keeps a history (offset + epoch): subscribe with `recoverable: true` to receive what was missed. */
  recoverable: boolean;
}

const INSTRUMENT: ChannelParameter = { description: 'instrument id, e.g. BTCUSDT (GET /api/market/instrument)' };
const EXCHANGE_ID: ChannelParameter = { description: 'your exchangeId (GET /api/user/me)' };

/** Every channel family, in the order of the lists in channel-policy.ts. */
export function channelTable(): ChannelSpec[] {
  const recoverablePublic = RECOVERABLE_PUBLIC_CHANNELS as readonly string[];
  return [
    ...PUBLIC_CHANNELS.map((n): ChannelSpec => ({
      ...PUBLIC_DOCS[n], name: n, parameters: {}, access: 'public', recoverable: recoverablePublic.includes(n),
    })),
    {
      ...BOOK_DOCS.grouped, name: 'orderBook-{instrument}-{grouping}', access: 'public', recoverable: false,
      parameters: { instrument: INSTRUMENT, grouping: { description: 'price step of the levels', enum: [...ORDER_BOOK_GROUPINGS] } },
    },
    { ...BOOK_DOCS.best, name: 'orderBook-{instrument}-best', access: 'public', recoverable: false, parameters: { instrument: INSTRUMENT } },
    ...INSTRUMENT_CHANNELS.map((n): ChannelSpec => ({
      ...INSTRUMENT_DOCS[n], name: `${n}-{instrument}`, parameters: { instrument: INSTRUMENT }, access: 'public', recoverable: false,
    })),
    ...USER_CHANNELS.map((n): ChannelSpec => ({
      ...USER_DOCS[n], name: `${n}-{exchangeId}`, parameters: { exchangeId: EXCHANGE_ID }, access: 'owner', recoverable: true,
    })),
  ];
}

/** Payload schemas for `components.schemas` (plain JSON copies: the documents must not share the live records). */
export function channelComponentSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(PAYLOADS).map(([name, s]) => [name, JSON.parse(JSON.stringify(s)) as Record<string, unknown>]));
}

/** What every channel document says about the protocol. */
export const REALTIME_PROTOCOL = 'Centrifugo bidirectional protocol (JSON), as spoken by the `centrifuge` npm client v5. Channel names are '
  + '`{env}:{name}` ({env} = CHANNEL_ENV, futures-perp-dev by default). Per-user channels take `{ "accessToken": "<JWT>" }` '
  + 'as the subscribe data and only their owner may subscribe. Clients drop an update whose comparison field is not '
  + 'newer than the last one they saw for the same entity; the server keeps those fields strictly increasing. '
  + `Recoverable channels keep ${RECOVERABLE_HISTORY.size} publications for ${RECOVERABLE_HISTORY.ttlMs / 60_000} minutes. `
  + 'A channel\'s history is answered only on a subscription already answered (authorized). Commands beyond the '
  + 'per-connection rates (WS_* settings) get error 111 "too many requests"; a client that keeps going is disconnected '
  + 'with 3013. A subscription ends with unsubscribe code 2000 "session ended" when its login session ends.';

/** The websocket endpoint of the real-time server. */
export const REALTIME_PATH = DEFAULT_WS_PATH;

/** The `x-realtime` extension of the OpenAPI document; a closed parameter is written `{a|b|c}`. */
export function realtimeExtension(): Record<string, unknown> {
  return {
    description: REALTIME_PROTOCOL,
    path: REALTIME_PATH,
    channels: Object.fromEntries(channelTable().map((c) => {
      const name = c.name.replace(/\{(\w+)\}/g, (whole, p: string) => (c.parameters[p]?.enum ? `{${c.parameters[p].enum.join('|')}}` : whole));
      return [`{env}:${name}`, {
        description: c.description,
        payload: { $ref: `#/components/schemas/${c.payload}` },
        ...(c.compare && { compareBy: c.compare }),
        subscribeData: c.access === 'owner' ? '{ "accessToken": "<JWT>" } (owner only)' : 'none',
        recoverable: c.recoverable,
      }];
    })),
  };
}
