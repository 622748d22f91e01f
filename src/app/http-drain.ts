/**
 * Counts HTTP requests in flight on a Node server so a graceful stop can wait for them: a request that
 * reached a route before the stop still gets its command sequenced and its answer, instead of meeting a
 * sequencer that already stopped. Listens on the raw server (not Fastify hooks), so it sees every request
 * whatever plugin serves it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export class HttpDrain {
  private readonly inFlight = new Set<ServerResponse>();
  private waiters: Array<() => void> = [];
  private draining = false;
  /** Set once the drain is over: the sequencer is about to stop, so a late request has nothing to answer it. */
  private drained = false;

  /** The 'close' listener of every response (the emitter calls it with the response as `this`). */
  private readonly onResponseClose: (this: ServerResponse) => void;

  constructor(private readonly server: Server) {
    const inFlight = this.inFlight;
    const release = () => this.release();
    this.onResponseClose = function (this: ServerResponse) {
      inFlight.delete(this);
      if (inFlight.size === 0) release();
    };
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.drained) {
        // A request that was still on its way in (a connection accepted before the close) when the drain
        // finished: end its connection, as a stopped server would, rather than answer 5xx from a stopped
        // sequencer. Its command is either applied (like any ack lost in transit) or never seen.
        req.socket.destroy();
        return;
      }
      this.inFlight.add(res);
      if (this.draining) res.setHeader('connection', 'close');
      // 'close' fires once per response: after it was sent, or when the client went away first. One shared
      // listener (no closure and no once() wrapper per request: this runs on every request).
      res.on('close', this.onResponseClose);
    });
  }

  get pending(): number {
    return this.inFlight.size;
  }

  /**
   * Waits for the requests in flight (call after `server.close()`, which stops new connections and ends idle
   * keep-alive ones). Their answers carry `Connection: close`, so no client sends another request on those
   * sockets; once they are answered every remaining idle socket is closed. Resolves true when all were
   * answered, false when `timeoutMs` passed first.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    const done = await this.idle(timeoutMs);
    this.drained = true;
    this.server.closeIdleConnections();
    return done;
  }

  /** Resolves true once no request is in flight, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight.size === 0) return Promise.resolve(true);
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
