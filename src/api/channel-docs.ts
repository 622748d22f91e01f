/**
 * The real-time channels in the OpenAPI document: their payloads as component schemas (the same TypeBox records
 * src/realtime/channels.ts publishes) and an `x-realtime` extension listing every channel with its payload,
 * authorization, history and comparison field. OpenAPI has no notion of channels; this is where a client finds
 * the shapes the interface spec leaves "not shown" (coin-price, for one).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ORDER_BOOK_GROUPINGS } from '../domain/enums.js';
import {
  AccountEventRecord, CoinRecord, DepthRecord, FundingEventRecord, FundingRateEventRecord, InstrumentLiveRecord, OrderFeeEventRecord,
  OrderFillRecord, OrderRecord, PositionRecord, RecentTradeRecord, TpSlRecord, TradeEventRecord, TransferRecord,
} from '../records/index.js';

const IsoTime = Type.String({ description: 'ISO 8601 timestamp' });

/** Payload schemas by component name. */
const PAYLOADS: Record<string, TSchema> = {
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
};

interface ChannelDoc {
  payload: keyof typeof PAYLOADS;
  description: string;
  /** Field clients compare per entity (they drop an update not newer than the last one seen). */
  compare?: string;
  /** Per-user channel: subscribe data `{ accessToken }`, owner only. */
  user?: boolean;
  /** Keeps a history (offset + epoch): subscribe with `recoverable: true` to receive what was missed. */
  recoverable?: boolean;
}

const CHANNELS: Record<string, ChannelDoc> = {
  heartbeat: { payload: 'ChannelHeartbeat', description: 'every HEARTBEAT_MS; silence over 30 s means the connection is lost' },
  info: { payload: 'ChannelInfo', compare: 'updatedAt', description: 'matcher state snapshot, every HEARTBEAT_MS and on every change' },
  instruments: { payload: 'ChannelInstrument', compare: 'updatedAt (per instrument id)', description: 'live instrument fields on every change' },
  'coin-price': { payload: 'ChannelCoinPrice', description: 'index price of a base coin at every index tick (price = the index)' },
  'funding-rate': { payload: 'ChannelFundingRate', compare: 'createdAt (per instrument)', recoverable: true, description: 'rate of each funding settlement' },
  [`orderBook-{instrument}-{${ORDER_BOOK_GROUPINGS.join('|')}}`]: {
    payload: 'ChannelOrderBook', compare: 'orderBook.t (per instrument)',
    description: 'depth grouped by the price step in the name, at most 50 levels a side, both sides ascending by price; at most one publication per BOOK_PUBLISH_INTERVAL_MS',
  },
  'orderBook-{instrument}-best': { payload: 'ChannelOrderBook', compare: 'orderBook.t (per instrument)', description: 'best bid and ask, same format as depth' },
  'recent-trade-{instrument}': { payload: 'ChannelRecentTrade', compare: 'createdAt (per instrument)', description: 'every trade, anonymized' },
  'trade-{instrument}': { payload: 'ChannelTrade', compare: 'createdAt (per instrument)', description: 'every trade, anonymized, without execution id' },
  'user-{exchangeId}': { payload: 'ChannelAccount', compare: 'updatedAt', user: true, recoverable: true, description: 'marginCall changes' },
  'funding-{exchangeId}': { payload: 'ChannelFunding', compare: 'updatedAt (per coin)', user: true, recoverable: true, description: 'collateral balance after each change (quantity is the new balance, a string)' },
  'transfer-update-{exchangeId}': { payload: 'ChannelTransfer', compare: 'updatedAt (per transfer id)', user: true, recoverable: true, description: 'deposits and withdrawals at each step' },
  'position-{exchangeId}': { payload: 'ChannelPosition', compare: 'updatedAt (per instrument)', user: true, recoverable: true, description: 'position changes; a closed position is sent once with quantity 0' },
  'order-{exchangeId}': { payload: 'ChannelOrder', compare: 'updatedAt (per order id)', user: true, recoverable: true, description: 'order changes (create, fill, replace, cancel, expiry, trigger)' },
  'orderFills-{exchangeId}': { payload: 'ChannelOrderFill', user: true, recoverable: true, description: 'each fill of your orders' },
  'order-fee-{exchangeId}': { payload: 'ChannelOrderFee', user: true, recoverable: true, description: 'fee of each fill (quantity a string)' },
  'tpsl-{exchangeId}': { payload: 'ChannelTpSl', compare: 'updatedAt (per TpSl id)', user: true, recoverable: true, description: 'TpSl create, modify, cancel, trigger' },
};

/** Payload schemas for `components.schemas` (plain JSON copies: the document must not share the live records). */
export function channelComponentSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(PAYLOADS).map(([name, s]) => [name, JSON.parse(JSON.stringify(s)) as Record<string, unknown>]));
}

/** The `x-realtime` extension. */
export function realtimeExtension(): Record<string, unknown> {
  return {
    description: 'Centrifugo bidirectional protocol (JSON), as spoken by the `centrifuge` npm client v5. Channel names are '
      + '`{env}:{name}` ({env} = CHANNEL_ENV, futures-perp-dev by default). Per-user channels take `{ "accessToken": "<JWT>" }` '
      + 'as the subscribe data and only their owner may subscribe. Clients drop an update whose comparison field is not '
      + 'newer than the last one they saw for the same entity; the server keeps those fields strictly increasing. '
      + 'A channel\'s history is answered only on a subscription already answered (authorized). Commands beyond the '
      + 'per-connection rates (WS_* settings) get error 111 "too many requests"; a client that keeps going is disconnected '
      + 'with 3013. A subscription ends with unsubscribe code 2000 "session ended" when its login session ends.',
    path: '/connection/websocket',
    channels: Object.fromEntries(Object.entries(CHANNELS).map(([name, c]) => [`{env}:${name}`, {
      description: c.description,
      payload: { $ref: `#/components/schemas/${c.payload}` },
      ...(c.compare && { compareBy: c.compare }),
      subscribeData: c.user ? '{ "accessToken": "<JWT>" } (owner only)' : 'none',
      recoverable: c.recoverable === true,
    }])),
  };
}
