/**
 * Clients that ride out the loss of a gateway behind a load balancer, as a well-behaved bot would: a centrifuge
 * client on its private order channel (recoverable, so a reconnect to another gateway resumes from its last
 * offset), and an order loop that sends each signed order until it gets an answer, resending the same signed
 * body (same order id) after a connection failure or a 502/503/504 of the load balancer.
 */
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { newOrderId, sleep, type Bot } from '../app/client.js';

export interface Publication {
  offset: number;
  id: string;
  status: string;
}

export interface Subscribed {
  wasRecovering: boolean;
  recovered: boolean;
}

/** A user's `order-<exchangeId>` channel through one URL, with every publication and (re)subscription kept. */
export class OrderChannelListener {
  readonly publications: Publication[] = [];
  readonly subscribed: Subscribed[] = [];
  readonly errors: string[] = [];
  private readonly client: Centrifuge;
  private readonly sub: Subscription;

  constructor(wsUrl: string, channel: string, accessToken: string) {
    this.client = new Centrifuge(wsUrl, { websocket: WebSocket, minReconnectDelay: 100, maxReconnectDelay: 1000 });
    this.sub = this.client.newSubscription(channel, { data: { accessToken }, recoverable: true, positioned: true });
    this.sub.on('publication', (ctx) => {
      const d = ctx.data as { id: string; status: string };
      this.publications.push({ offset: Number(ctx.offset), id: d.id, status: d.status });
    });
    this.sub.on('subscribed', (ctx) => this.subscribed.push({ wasRecovering: ctx.wasRecovering, recovered: ctx.recovered }));
    this.sub.on('error', (ctx) => this.errors.push(JSON.stringify(ctx.error)));
    this.sub.subscribe();
    this.client.connect();
  }

  /** Resolves on the first subscription. */
  ready(): Promise<void> {
    return this.sub.ready(30_000);
  }

  /** Subscriptions after the first: the reconnects. */
  get resubscribed(): Subscribed[] {
    return this.subscribed.slice(1);
  }

  close(): void {
    this.client.disconnect();
  }
}

export type OrderOutcome =
  /** A 2xx: acknowledged. */
  | 'acked'
  /** 409 DUPLICATE_ORDER_ID on a resend: an earlier attempt reached the engine, whose answer was lost. */
  | 'applied-earlier'
  | 'refused'
  | 'gave-up';

export interface SentOrder {
  id: string;
  outcome: OrderOutcome;
  attempts: number;
  /** Attempts that failed in transit (no connection, reset, or a 502/503/504 from the load balancer). */
  transitFailures: number;
  /** The order's status in the acknowledgement. */
  status?: string;
  detail?: string;
}

const IN_TRANSIT = new Set([502, 503, 504]);

/** Sends one signed limit order until it has an answer (resending the same body); gives up after `deadlineMs`. */
export async function sendUntilAnswered(bot: Bot, limitPrice: string, deadlineMs = 20_000): Promise<SentOrder> {
  const id = newOrderId();
  const body = await bot.limitBody({ id, side: 'BUY', quantity: '0.001', limitPrice, leverage: 10 });
  const end = Date.now() + deadlineMs;
  let attempts = 0;
  let transitFailures = 0;
  let last = '';
  while (Date.now() < end) {
    attempts++;
    let status: number;
    let code: string | undefined;
    let orderStatus: string | undefined;
    try {
      const res = await bot.post('/api/v2/order/limit', body);
      status = res.status;
      code = (res.body as { error?: { code?: string } } | undefined)?.error?.code;
      orderStatus = (res.body as { status?: string } | undefined)?.status;
      last = `${status} ${JSON.stringify(res.body).slice(0, 200)}`;
    } catch (err) {
      transitFailures++;
      last = err instanceof Error ? `${err.message} (${String((err.cause as Error | undefined)?.message ?? '')})` : String(err);
      await sleep(100);
      continue;
    }
    if (status >= 200 && status < 300) return { id, outcome: 'acked', attempts, transitFailures, status: orderStatus };
    if (IN_TRANSIT.has(status)) {
      transitFailures++;
      await sleep(100);
      continue;
    }
    if (status === 409 && code === 'DUPLICATE_ORDER_ID' && attempts > 1) return { id, outcome: 'applied-earlier', attempts, transitFailures };
    return { id, outcome: 'refused', attempts, transitFailures, detail: last };
  }
  return { id, outcome: 'gave-up', attempts, transitFailures, detail: last };
}

/** `workers` loops of resting buy orders (well under the market, so they stay open) until `running()` is false. */
export async function orderLoad(bot: Bot, workers: number, sent: SentOrder[], running: () => boolean): Promise<void> {
  const loop = async (w: number) => {
    for (let i = 0; running(); i++) sent.push(await sendUntilAnswered(bot, (90_000 + w * 100 + (i % 50)).toFixed(1)));
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => loop(w)));
}
