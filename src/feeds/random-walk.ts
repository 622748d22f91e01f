/**
 * Seeded random walk per instrument (the default feed, so `npm start` shows moving prices). Integer-only:
 * a 32-bit xorshift generator, an approximately normal step from the sum of four 16-bit uniforms
 * (Irwin–Hall), scaled so one step's standard deviation is `volatility` (a fraction in 1e-8 units) of the
 * price. The walk continues from the engine's current index, so an operator push moves it.
 */
import { fitPrice, type FeedInstrument } from './feed-instrument.js';
import type { IndexFeed, PriceSink } from './ports.js';
import type { Units } from '../domain/fixed.js';

/** Standard deviation of the sum of four uniform integers in [0, 65535]: sqrt(4 × (65536² − 1) / 12). */
const IRWIN_HALL_SD = 37837n;
const IRWIN_HALL_MEAN = 4n * 65535n / 2n;

/** xorshift32: deterministic per seed, integers only. */
export class XorShift32 {
  private x: number;
  constructor(seed: number) {
    this.x = (seed | 0) === 0 ? 0x9e3779b9 | 0 : seed | 0;
  }
  next(): number {
    let x = this.x;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.x = x;
    return x >>> 0;
  }
}

export interface RandomWalkOptions {
  /** Asked at every round, so instruments listed later join the walk. */
  instruments: FeedInstrument[] | (() => FeedInstrument[]);
  /** Start price per instrument when the engine has no index yet. */
  startPrices: Record<string, Units>;
  /** Current index of an instrument (the engine's), or null. */
  currentIndex: (instrument: string) => Units | null;
  sink: PriceSink;
  intervalMs: number;
  /** Standard deviation of one step, fraction in 1e-8 units (0.0005 → 50_000). */
  volatility: Units;
  seed: number;
  onError?: (err: unknown) => void;
}

export class RandomWalkFeed implements IndexFeed {
  readonly name = 'random';
  private readonly rng: XorShift32;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly opts: RandomWalkOptions) {
    this.rng = new XorShift32(opts.seed);
  }

  /** Next price of one instrument from `price` (exposed for tests: pure given the generator state). */
  step(inst: FeedInstrument, price: Units): Units {
    let sum = 0n;
    for (let i = 0; i < 4; i++) sum += BigInt(this.rng.next() & 0xffff);
    const z = sum - IRWIN_HALL_MEAN; // ≈ N(0, IRWIN_HALL_SD²)
    const fraction = (z * BigInt(this.opts.volatility)) / IRWIN_HALL_SD; // 1e-8 units
    const p = BigInt(price);
    return fitPrice(p + (p * fraction) / 100_000_000n, inst);
  }

  /** One round: a new index for every instrument, submitted in instrument order. */
  async tick(): Promise<void> {
    const list = typeof this.opts.instruments === 'function' ? this.opts.instruments() : this.opts.instruments;
    for (const inst of list) {
      const base = this.opts.currentIndex(inst.id) ?? this.opts.startPrices[inst.id];
      if (base === undefined || base === null) continue;
      await this.opts.sink(inst.id, this.step(inst, base));
    }
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.inFlight = this.tick()
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => {
          this.inFlight = undefined;
          if (!this.stopped) this.timer = setTimeout(loop, this.opts.intervalMs);
        });
    };
    this.timer = setTimeout(loop, this.opts.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
  }
}
