// Test helpers: a realtime server on 127.0.0.1:random and real centrifuge clients.
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { createRealtimeServer, type RealtimeServer, type RealtimeServerOptions } from '../../src/realtime/index.js';
import type { Authorize } from '../../src/realtime/index.js';

export const PUBLIC = 'test:public';

/** Fake app policy: public channels open, `private-<id>` needs data.accessToken === 'token-of-<id>'. */
export const fakeAuthorize: Authorize = async (channel, data) => {
  if (channel.startsWith('test:public') || channel === 'test:funding-rate') return { allowed: true };
  const m = /^test:private-(\w+)$/.exec(channel);
  if (!m) return { allowed: false, code: 102, message: 'unknown channel' };
  const token = (data as { accessToken?: string } | undefined)?.accessToken;
  if (token === `token-of-${m[1]}`) return { allowed: true };
  return { allowed: false, code: 103, message: 'permission denied' };
};

export async function startServer(opts: Partial<RealtimeServerOptions> = {}): Promise<{ rt: RealtimeServer; url: string }> {
  const rt = createRealtimeServer({ authorize: fakeAuthorize, ...opts });
  const addr = await rt.listen(0, '127.0.0.1');
  return { rt, url: `ws://127.0.0.1:${addr.port}/connection/websocket` };
}

export function client(url: string, opts: Record<string, unknown> = {}): Centrifuge {
  return new Centrifuge(url, { websocket: WebSocket, minReconnectDelay: 50, maxReconnectDelay: 200, ...opts });
}

export function connected(c: Centrifuge): Promise<void> {
  return new Promise((resolve) => {
    if (c.state === 'connected') return resolve();
    c.once('connected', () => resolve());
  });
}

export function subscribed(sub: Subscription): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    sub.once('subscribed', (ctx) => resolve(ctx as unknown as Record<string, unknown>));
    sub.once('unsubscribed', (ctx) => reject(Object.assign(new Error(`unsubscribed ${ctx.code} ${ctx.reason}`), ctx)));
  });
}

export async function waitFor(cond: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timeout waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw protocol client: connect command sent on open, replies/pushes collected. */
export class RawClient {
  readonly messages: Record<string, unknown>[] = [];
  readonly frames: string[] = [];
  closeCode = 0;
  closeReason = '';
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;

  constructor(url: string, opts: { connect?: boolean; autoPong?: boolean; ws?: WebSocket.ClientOptions } = {}) {
    this.ws = new WebSocket(url, opts.ws);
    this.opened = new Promise((resolve) => this.ws.once('open', () => resolve()));
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        resolve();
      }),
    );
    this.ws.on('message', (data) => {
      const text = data.toString();
      this.frames.push(text);
      for (const line of text.split('\n')) {
        if (!line) continue;
        const msg = JSON.parse(line) as Record<string, unknown>;
        this.messages.push(msg);
        if (opts.autoPong && Object.keys(msg).length === 0) this.ws.send('{}');
      }
    });
    if (opts.connect !== false) this.opened.then(() => this.send({ id: 1, connect: {} }));
  }

  send(cmd: unknown): void {
    this.ws.send(JSON.stringify(cmd));
  }

  reply(id: number): Record<string, unknown> | undefined {
    return this.messages.find((m) => m.id === id);
  }
}
