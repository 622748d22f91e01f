/**
 * Real-time data through the `centrifuge` client (the exchange's Centrifugo-protocol websocket). Public
 * channels subscribe plainly; private ones send the access token as subscribe data (fetched again on every
 * resubscribe, so a refreshed token is used after an expiry or a reconnect). The client reconnects by itself.
 */
import { Centrifuge, type Subscription } from 'centrifuge';

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected';

export class Realtime {
  readonly client: Centrifuge;
  status: ConnectionStatus = 'connecting';
  private readonly listeners = new Set<(s: ConnectionStatus) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private everConnected = false;

  constructor(url: string, readonly env: string) {
    this.client = new Centrifuge(url, { minReconnectDelay: 300, maxReconnectDelay: 3000 });
    this.client.on('connecting', () => this.set('connecting'));
    this.client.on('disconnected', () => this.set('disconnected'));
    this.client.on('connected', () => {
      this.set('connected');
      if (this.everConnected) for (const f of this.reconnectListeners) f();
      this.everConnected = true;
    });
    this.client.connect();
  }

  private set(s: ConnectionStatus): void {
    this.status = s;
    for (const f of this.listeners) f(s);
  }

  onStatus(f: (s: ConnectionStatus) => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Called after every reconnect (not the first connect): callers reload what they might have missed. */
  onReconnect(f: () => void): () => void {
    this.reconnectListeners.add(f);
    return () => this.reconnectListeners.delete(f);
  }

  /** Subscribes to `{env}:{name}`; returns the unsubscribe function. */
  subscribe(name: string, onData: (data: unknown) => void, accessToken?: () => Promise<string>): () => void {
    const channel = `${this.env}:${name}`;
    const existing = this.client.getSubscription(channel);
    if (existing) this.client.removeSubscription(existing);
    const sub: Subscription = this.client.newSubscription(channel, {
      ...(accessToken ? { getData: async () => ({ accessToken: await accessToken() }), recoverable: true } : {}),
    });
    sub.on('publication', (ctx) => onData(ctx.data));
    sub.subscribe();
    return () => {
      sub.unsubscribe();
      this.client.removeSubscription(sub);
    };
  }

  close(): void {
    this.client.disconnect();
  }
}
