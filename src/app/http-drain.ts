/**
 * Counts HTTP requests in flight on a Node server so a graceful stop can wait for them: a request that
 * reached a route before the stop still gets its command sequenced and its answer, instead of meeting a
 * sequencer that already stopped. Listens on the raw server (not Fastify hooks), so it sees every request
 * whatever plugin serves it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export class HttpDrain {
  private inFlight = 0;
  private waiters: Array<() => void> = [];

  constructor(server: Server) {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.inFlight++;
      // 'close' fires once per response: after it was sent, or when the client went away first.
      res.once('close', () => {
        this.inFlight--;
        if (this.inFlight === 0) this.release();
      });
    });
  }

  get pending(): number {
    return this.inFlight;
  }

  /** Resolves true once no request is in flight, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(done);
    });
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
