/**
 * Session revocations as events. The auth service publishes each revocation it makes and learns of every
 * revocation (its own and, once gateways run as a cluster, those made on other nodes) from `subscribe`: it
 * refuses the session's access tokens from then on, and the real-time server ends the session's private
 * subscriptions. A cluster implements the SessionEvents port (ports.ts) on its message broker; one process uses this one.
 */
import type { SessionEvents, SessionRevokedListener } from './ports.js';
import type { SessionRevoked } from './types.js';

/** Same-process delivery, synchronous: a listener has acted by the time publish returns. */
export class InProcessSessionEvents implements SessionEvents {
  private readonly listeners = new Set<SessionRevokedListener>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  publish(event: SessionRevoked): void {
    for (const listener of this.listeners) {
      // One failing listener (say, a closed real-time server) must not keep the others from acting.
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  subscribe(listener: SessionRevokedListener): () => void {
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const own: SessionRevokedListener = (e) => listener(e);
    this.listeners.add(own);
    return () => void this.listeners.delete(own);
  }
}
