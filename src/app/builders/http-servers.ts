/**
 * The gateway's HTTP servers close in two steps around everything that still answers on them: the gateway's
 * stop (buildHttp) stops accepting connections and drains the requests in flight; this holder's stop, registered
 * before the real-time server so it runs after it, ends what outlived the grace period (refused by the stopped
 * sequencer by then) and waits for the servers to close, which needs the websockets on them gone first.
 */
import type { FastifyInstance } from 'fastify';
import type { Built } from '../shutdown-registry.js';

export class HttpServers {
  private readonly apps: FastifyInstance[] = [];
  private closing: Promise<PromiseSettledResult<unknown>[]> | undefined;

  /** A server to close (added as soon as it is built, so a failed start closes it too). */
  add(app: FastifyInstance): void {
    if (this.closing) throw new Error('the HTTP servers are closing');
    this.apps.push(app);
  }

  /** No new connections; keep-alive sockets end after their current request. */
  beginClose(): Promise<PromiseSettledResult<unknown>[]> {
    // Settled, not rejected: a failure is reported by finishClose, never as an unhandled rejection meanwhile.
    this.closing ??= Promise.allSettled(this.apps.map((app) => app.close()));
    return this.closing;
  }

  /** Ends every connection still open and waits until the servers have closed. */
  async finishClose(): Promise<void> {
    const closed = this.beginClose();
    for (const app of this.apps) app.server.closeAllConnections();
    const failed = (await closed).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

export function buildHttpServers(): Built<HttpServers> {
  const servers = new HttpServers();
  return { service: servers, stop: () => servers.finishClose() };
}
