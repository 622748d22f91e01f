/**
 * Replays index prices from CSV files (`timestamp,price` per line; timestamp in epoch ms or ISO 8601; an
 * optional header line; `#` comments). Rows are sent in timestamp order with their original spacing divided
 * by `speed`; at the end the file starts over (prices only: the engine stamps its own time).
 */
import { readFileSync } from 'node:fs';
import { parseUnits, type Units } from '../domain/fixed.js';
import { fitPrice, type FeedInstrument } from './feed-instrument.js';
import type { IndexFeed, PriceSink } from './ports.js';

export interface CsvRow {
  t: number;
  price: Units;
}

/** Parses the CSV text; throws with the line number on a malformed row. Prices are exact decimals. */
export function parseIndexCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  const lines = text.split(/\r?\n/);
  let first = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const [ts, price, ...rest] = line.split(',').map((s) => s.trim());
    const header = first && !/^[0-9]/.test(ts);
    first = false;
    if (header) continue;
    if (price === undefined || rest.length > 0) throw new Error(`line ${i + 1}: expected "timestamp,price"`);
    const t = /^\d+$/.test(ts) ? Number(ts) : Date.parse(ts);
    if (!Number.isFinite(t)) throw new Error(`line ${i + 1}: bad timestamp ${JSON.stringify(ts)}`);
    let p: Units;
    try {
      p = parseUnits(price);
    } catch {
      throw new Error(`line ${i + 1}: bad price ${JSON.stringify(price)}`);
    }
    if (p <= 0) throw new Error(`line ${i + 1}: price must be positive`);
    rows.push({ t, price: p });
  }
  rows.sort((a, b) => a.t - b.t);
  return rows;
}

export interface CsvReplayOptions {
  /** Instrument → its rows (parseIndexCsv). */
  series: Map<string, { inst: FeedInstrument; rows: CsvRow[] }>;
  sink: PriceSink;
  /** Replay speed factor (2 = twice as fast). */
  speed: number;
  /** Lower bound of the wait between rows, ms (rows with equal timestamps still go one by one). */
  minDelayMs?: number;
  onError?: (err: unknown) => void;
}

export function loadCsvSeries(spec: string, instruments: FeedInstrument[]): Map<string, { inst: FeedInstrument; rows: CsvRow[] }> {
  const series = new Map<string, { inst: FeedInstrument; rows: CsvRow[] }>();
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`INDEX_FEED_CSV entry "${part}" must be INSTRUMENT=path`);
    const id = part.slice(0, eq);
    const inst = instruments.find((i) => i.id === id);
    if (!inst) throw new Error(`INDEX_FEED_CSV: unknown instrument ${id}`);
    const rows = parseIndexCsv(readFileSync(part.slice(eq + 1), 'utf8'));
    if (rows.length === 0) throw new Error(`INDEX_FEED_CSV: no rows for ${id}`);
    series.set(id, { inst, rows });
  }
  return series;
}

export class CsvReplayFeed implements IndexFeed {
  readonly name = 'csv';
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = true;

  constructor(private readonly opts: CsvReplayOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    for (const [id, s] of this.opts.series) this.play(id, s.inst, s.rows, 0);
  }

  private play(id: string, inst: FeedInstrument, rows: CsvRow[], i: number): void {
    if (this.stopped) return;
    const row = rows[i];
    const p = this.opts.sink(id, fitPrice(BigInt(row.price), inst))
      .catch((err: unknown) => this.opts.onError?.(err))
      .finally(() => {
        this.inFlight.delete(p);
        const next = (i + 1) % rows.length;
        const gap = next === 0 ? 0 : rows[next].t - row.t;
        const delay = Math.max(this.opts.minDelayMs ?? 1, Math.round(gap / this.opts.speed));
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.play(id, inst, rows, next);
        }, delay);
        this.timers.add(timer);
      });
    this.inFlight.add(p);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inFlight]);
  }
}
