/**
 * Command history for the start-up benchmark, written through the real Sequencer + SQLite journal + file
 * snapshots + read-model projector (the same pieces and formats `npm start` uses), so the data directory is
 * exactly what a server that executed these commands would leave behind.
 *
 * The stream: setup (the demo instruments, their start prices, one deposit per user), then the engine
 * benchmark's seeded mix (bench/engine/workload.ts: 55% limit GTC, 35% cancel of a resting order, 10%
 * taker LIMIT IOC / MARKET, ~1,000 users, BTCUSDT + ETHUSDT; takers and marketable limits fill), with an
 * index price tick per instrument every 5,000 commands. Command i of the stream is the same in every
 * process (same seed), so a later process can append commands [from, to) to an existing directory.
 */
import { join } from 'node:path';
import pino from 'pino';
import type { Command, CommandInput } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { FileSnapshotStore } from '../../src/journal/file-snapshots.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { ProjectorFeed } from '../../src/app/projector-feed.js';
import { InProcessEventBroker } from '../../src/sequencer/event-bus.js';
import { recover } from '../../src/sequencer/recovery.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { openReadStore } from '../../src/store/index.js';
import { engineCommands, setupCommands } from '../engine/runs.js';
import { BASE_TS, generateWorkload, INSTRUMENTS } from '../engine/workload.js';

export const USERS = 1000;
const TICK_EVERY = 5000;
const SEED = 20261122;

/** The first `total` commands of the stream (setup included). */
export function historyCommands(total: number): Command[] {
  const setup = setupCommands(USERS);
  const flowCount = Math.max(0, total - setup.length);
  const ticks = Math.floor(flowCount / TICK_EVERY) * INSTRUMENTS.length;
  const flow = engineCommands(generateWorkload({ ops: flowCount - ticks, seed: SEED, users: USERS, tsStart: BASE_TS + 10_000, idBase: 1 }));
  const out: Command[] = [...setup];
  let f = 0;
  let tick = 0;
  while (out.length < total) {
    if ((out.length - setup.length + 1) % TICK_EVERY === 0) {
      const ts = f < flow.length ? flow[f].ts : BASE_TS;
      for (const spec of INSTRUMENTS) {
        if (out.length >= total) break;
        // ±0.5% around the start price: marks move, funding samples accrue, nothing runs away.
        const wobble = Math.round(((tick++ % 21) - 10) * 0.0005 * spec.startPrice / spec.tick) * spec.tick;
        out.push({ kind: 'price.tick', ts, instrument: spec.id, indexPrice: spec.startPrice + wobble });
      }
      continue;
    }
    out.push(flow[f++]);
  }
  return out;
}

export interface WriteOptions {
  dataDir: string;
  /** Stream positions [from, to): `from` must equal the directory's journal length. */
  from: number;
  to: number;
  snapshotEveryCommands: number;
  /** Final snapshot on stop (a clean stop); false leaves the tail after the last periodic snapshot. */
  snapshotOnStop: boolean;
  /** SIGKILL this process as soon as the last command is acknowledged (no stop, read model left as it is). */
  crashAtEnd?: boolean;
  onProgress?: (done: number) => void;
}

/** Appends commands [from, to) of the stream through the sequencer; returns the refused count. */
export async function writeHistory(o: WriteOptions): Promise<{ seq: number; refused: number }> {
  const log = pino({ level: 'silent' });
  const cmds = historyCommands(o.to).slice(o.from);
  const journal = await openSqliteJournal({ file: join(o.dataDir, 'journal.db') });
  const snapshots = new FileSnapshotStore({ dir: join(o.dataDir, 'snapshots') });
  if (journal.lastSeq() !== o.from) throw new Error(`journal has ${journal.lastSeq()} commands, expected ${o.from}`);
  const engine = await recover({ journal, snapshots, createEngine, restoreEngine });
  const store = await openReadStore({ kind: 'sqlite', file: join(o.dataDir, 'read.db') });
  const feed = new ProjectorFeed(store.projector, log, engine.seq);
  const bus = new InProcessEventBroker({ logger: log });
  bus.subscribe('read-model', feed.push);
  let ts = 0;
  const sequencer = new Sequencer({
    engine, journal, snapshots, bus, clock: () => ts, logger: log,
    snapshotEveryCommands: o.snapshotEveryCommands, snapshotOnStop: o.snapshotOnStop,
  });
  let refused = 0;
  const INFLIGHT = 2048;
  for (let i = 0; i < cmds.length; i += INFLIGHT) {
    const batch: Array<Promise<unknown>> = [];
    for (let j = i; j < Math.min(cmds.length, i + INFLIGHT); j++) {
      const { ts: cmdTs, ...input } = cmds[j];
      ts = cmdTs;
      batch.push(sequencer.submit(input as CommandInput).then((r) => { if (!r.reply.ok) refused++; }));
    }
    await Promise.all(batch);
    if (o.crashAtEnd && i + INFLIGHT >= cmds.length) process.kill(process.pid, 'SIGKILL');
    // Keep the projector from falling arbitrarily far behind (its buffer is memory).
    await feed.drain();
    o.onProgress?.(o.from + Math.min(cmds.length, i + INFLIGHT));
  }
  await sequencer.stop();
  await bus.drain();
  await feed.drain();
  const seq = engine.seq;
  await snapshots.close();
  await journal.close();
  await store.close();
  return { seq, refused };
}
