/**
 * Signed trading load for the chaos tests: bots signed in through each gateway place resting buys, sell into
 * the book (fills across bots and gateways) and cancel their oldest open order, in loops that run until
 * stopped, whatever the cluster answers. Every answer is recorded, so a test can check afterwards that each
 * acknowledged (2xx) command survived and that no request ever got a 500 or lost its connection.
 */
import { Bot, newOrderId, type Res } from '../../app/client.js';

export type Action = 'place' | 'cancel';

export interface Outcome {
  action: Action;
  /** The order placed or cancelled. */
  orderId: string;
  gateway: number;
  /** Index of the bot in `SignedLoad.bots`. */
  bot: number;
  /** HTTP status; 0 when the request failed without an answer (connection refused or reset). */
  status: number;
  code?: string;
  /** Order status in a 2xx place answer. */
  orderStatus?: string;
  /** When the request was sent and when its answer (or failure) came, ms. */
  sentAt: number;
  at: number;
}

export interface SignedLoad {
  outcomes: Outcome[];
  bots: Bot[];
  acked(action: Action): Outcome[];
  /** Commands answered with 2xx so far. */
  ackCount(): number;
  /** Stops the loops after their current request and waits for them. */
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `botsPerGateway` bots on each gateway URL; each signs in and takes the faucet through its own gateway. */
export async function startSignedLoad(gatewayUrls: string[], botsPerGateway = 2): Promise<SignedLoad> {
  const bots: Array<{ bot: Bot; gateway: number }> = [];
  for (const [gateway, url] of gatewayUrls.entries()) {
    for (let i = 0; i < botsPerGateway; i++) {
      const bot = await new Bot(url).signIn();
      await bot.faucet();
      bots.push({ bot, gateway });
    }
  }
  const outcomes: Outcome[] = [];
  let running = true;
  const record = (action: Action, orderId: string, gateway: number, bot: number, sentAt: number, res: Res | undefined): Outcome => {
    const body = res?.body as { status?: string; error?: { code?: string } } | undefined;
    const o: Outcome = { action, orderId, gateway, bot, status: res?.status ?? 0, code: body?.error?.code, sentAt, at: Date.now() };
    if (res && res.status < 300 && action === 'place') o.orderStatus = body?.status;
    outcomes.push(o);
    return o;
  };
  const call = async (fn: () => Promise<Res>): Promise<Res | undefined> => {
    try {
      return await fn();
    } catch {
      return undefined;
    }
  };
  const loop = async ({ bot, gateway }: { bot: Bot; gateway: number }, b: number): Promise<void> => {
    const open: string[] = [];
    for (let i = 0; running; i++) {
      let o: Outcome;
      if (open.length >= 6) {
        const id = open.shift()!;
        o = record('cancel', id, gateway, b, Date.now(), await call(() => bot.del(`/api/order/${encodeURIComponent(id)}`)));
      } else if (i % 4 === 3) {
        // Crosses the best resting buys of the other bots: fills, across gateways.
        const id = newOrderId();
        o = record('place', id, gateway, b, Date.now(), await call(() => bot.limit({ id, side: 'SELL', quantity: '0.001', limitPrice: '90000', leverage: 10 })));
      } else {
        const id = newOrderId();
        const limitPrice = (90_000 + b * 50 + (i % 40)).toFixed(1);
        o = record('place', id, gateway, b, Date.now(), await call(() => bot.limit({ id, side: 'BUY', quantity: '0.002', limitPrice, leverage: 10 })));
        if (o.status === 200 && o.orderStatus === 'NEW') open.push(id);
      }
      // Back off while the cluster refuses, as a client honouring retry-after would (shortened).
      if (o.status >= 500 || o.status === 0) await pause(100);
    }
  };
  const loops = Promise.all(bots.map((b, i) => loop(b, i)));
  return {
    outcomes,
    bots: bots.map((b) => b.bot),
    acked: (action) => outcomes.filter((o) => o.action === action && o.status >= 200 && o.status < 300),
    ackCount: () => outcomes.filter((o) => o.status >= 200 && o.status < 300).length,
    async stop() {
      running = false;
      await loops;
    },
  };
}

/** Counts of answers by status (and code), for messages and the docs' tables. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    const key = o.status === 0 ? 'no answer' : o.code ? `${o.status} ${o.code}` : String(o.status);
    t[key] = (t[key] ?? 0) + 1;
  }
  return t;
}
