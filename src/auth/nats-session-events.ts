/**
 * Session revocations broadcast on a NATS subject, so every gateway of a cluster refuses a revoked session at
 * once (the SessionEvents port; one process uses InProcessSessionEvents). Core NATS, not a stream: the store
 * holds every revocation, so a node that was cut off from NATS reads the ones it may have missed from there
 * when it reconnects (`missedSince`), as every node does when it starts.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { SessionEvents, SessionRevokedListener } from './ports.js';
import { InProcessSessionEvents } from './session-events.js';
import type { SessionRevoked } from './types.js';

export interface NatsSessionEventsOptions {
  /** Open connection; the caller closes it after this. */
  nc: NatsConnection;
  /** e.g. perpx.<cluster>.sessions.revoked */
  subject: string;
  /** Revocations made since `since` (ms), read from the store after a reconnect. */
  missedSince?: (since: number) => Promise<SessionRevoked[]>;
  onListenerError?: (err: unknown) => void;
  now?: () => number;
}

interface WireRevocation extends SessionRevoked {
  /** The node that published it: it acted on its own revocation already. */
  origin: string;
}

/** Revocations made just before a disconnect was noticed are read again too. */
const MISSED_SLACK_MS = 60_000;

function decode(data: Uint8Array): WireRevocation | undefined {
  try {
    const v = JSON.parse(new TextDecoder().decode(data)) as Partial<WireRevocation>;
    const ok = typeof v.origin === 'string' && typeof v.sessionId === 'string' && typeof v.userId === 'string' && Number.isSafeInteger(v.revokedAt);
    return ok ? (v as WireRevocation) : undefined;
  } catch {
    return undefined;
  }
}

export class NatsSessionEvents implements SessionEvents {
  private readonly origin = randomUUID();
  private readonly local: InProcessSessionEvents;
  private readonly sub: Subscription;
  private readonly encoder = new TextEncoder();

  constructor(private readonly opts: NatsSessionEventsOptions) {
    this.local = new InProcessSessionEvents(opts.onListenerError);
    this.sub = opts.nc.subscribe(opts.subject, {
      callback: (err, msg) => {
        const event = err ? undefined : decode(msg.data);
        if (event && event.origin !== this.origin) this.local.publish({ sessionId: event.sessionId, userId: event.userId, revokedAt: event.revokedAt });
      },
    });
    if (opts.missedSince) void this.catchUpAfterReconnects(opts.missedSince);
  }

  /** Resolves once the server has registered this node's subscription (revocations published after it arrive). */
  async ready(): Promise<void> {
    await this.opts.nc.flush();
  }

  publish(event: SessionRevoked): void {
    // This node's listeners act at once, as in one process; the others learn it from the subject.
    this.local.publish(event);
    const wire: WireRevocation = { ...event, origin: this.origin };
    this.opts.nc.publish(this.opts.subject, this.encoder.encode(JSON.stringify(wire)));
  }

  subscribe(listener: SessionRevokedListener): () => void {
    return this.local.subscribe(listener);
  }

  close(): void {
    this.sub.unsubscribe();
  }

  private async catchUpAfterReconnects(missedSince: (since: number) => Promise<SessionRevoked[]>): Promise<void> {
    const now = this.opts.now ?? Date.now;
    let cutOffAt: number | undefined;
    for await (const status of this.opts.nc.status()) {
      if (status.type === 'disconnect') cutOffAt ??= now();
      if (status.type !== 'reconnect' || cutOffAt === undefined) continue;
      const since = cutOffAt - MISSED_SLACK_MS;
      cutOffAt = undefined;
      try {
        for (const event of await missedSince(since)) this.local.publish(event);
      } catch (err) {
        this.opts.onListenerError?.(err);
      }
    }
  }
}
