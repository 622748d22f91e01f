// Rate-limits publications per channel: the first change in a quiet period goes out at once,
// later ones within the interval collapse into one trailing publication of the latest state.
// Used for order books, where only the newest snapshot matters.
import type { Publish } from './ports.js';

export interface CoalescingOptions {
  /** Minimum time between two publications on one channel. Default 50 ms. */
  intervalMs?: number;
  /** Called when publish throws or rejects; default ignores (the next state supersedes it). */
  onError?: (err: unknown, channel: string) => void;
}

interface Window {
  timer: NodeJS.Timeout;
  /** Latest producer scheduled during the window; null when nothing changed since. */
  pending: (() => unknown) | null;
}

export class CoalescingPublisher {
  private readonly windows = new Map<string, Window>();
  private readonly intervalMs: number;
  private readonly onError: (err: unknown, channel: string) => void;

  constructor(
    private readonly publish: Publish,
    opts: CoalescingOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 50;
    this.onError = opts.onError ?? (() => {});
  }

  /**
   * `produce` runs only when its state is actually published (so building it is lazy); it returns undefined
   * when there is nothing new to send (the state already went out), and then nothing is published.
   */
  schedule(channel: string, produce: () => unknown): void {
    const w = this.windows.get(channel);
    if (w) {
      w.pending = produce;
      return;
    }
    this.emit(channel, produce);
    this.openWindow(channel);
  }

  /** Publishes every pending state now (e.g. before shutdown). */
  flush(): void {
    for (const [channel, w] of this.windows) {
      clearTimeout(w.timer);
      if (w.pending) this.emit(channel, w.pending);
    }
    this.windows.clear();
  }

  /** Drops pending states and timers. */
  close(): void {
    for (const w of this.windows.values()) clearTimeout(w.timer);
    this.windows.clear();
  }

  private openWindow(channel: string): void {
    const w: Window = {
      pending: null,
      timer: setTimeout(() => {
        this.windows.delete(channel);
        if (w.pending) {
          // Trailing edge: the final state always goes out, and opens the next window.
          this.emit(channel, w.pending);
          this.openWindow(channel);
        }
      }, this.intervalMs),
    };
    w.timer.unref();
    this.windows.set(channel, w);
  }

  private emit(channel: string, produce: () => unknown): void {
    try {
      const data = produce();
      if (data === undefined) return;
      const r = this.publish(channel, data);
      if (r instanceof Promise) r.catch((err) => this.onError(err, channel));
    } catch (err) {
      this.onError(err, channel);
    }
  }
}
