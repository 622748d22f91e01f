/**
 * Durability ports: the command journal and the snapshot store. The sequencer and recovery only see these
 * interfaces, so an adapter for PostgreSQL or NATS JetStream can replace SQLite without touching them or
 * the engine.
 */
import type { Command } from '../engine/commands.js';
import type { EngineSnapshot } from '../engine/api.js';

/** One journaled command. `command.ts` is the time the sequencer stamped; `seq` starts at 1. */
export interface JournalEntry {
  seq: number;
  command: Command;
}

/**
 * Entries in seq order. SQLite hands out a synchronous iterator (fast replay); a network adapter
 * (PostgreSQL cursor, JetStream consumer) will be asynchronous. Consumers use `for await`, which takes both.
 */
export type JournalReader = Iterable<JournalEntry> | AsyncIterable<JournalEntry>;

/**
 * Append-only, gap-free command log with group commit.
 *
 * Adapters are opened by an async factory that loads `lastSeq`/`lastTs`, so those stay synchronous here:
 * the sequencer is the only writer and the journal tracks them in memory after open.
 */
export interface CommandJournal {
  /**
   * Buffers one command; nothing is durable until a `flush()` covering it resolves. `seq` must be
   * `lastSeq() + 1` (the journal refuses gaps and reordering by throwing).
   */
  append(seq: number, command: Command): void;
  /**
   * Makes every command appended so far durable, all in one transaction / fsync (group commit).
   * Rejects if the write failed; the journal is then unusable (fail-stop) and later calls reject too.
   */
  flush(): Promise<void>;
  /** Durable entries with seq > fromSeqExclusive, streamed (never all in memory). */
  read(fromSeqExclusive: number): JournalReader;
  /** Seq of the last appended command (durable or buffered); 0 when empty. */
  lastSeq(): number;
  /** Seq of the last durable command. */
  durableSeq(): number;
  /** `ts` of the last appended command; 0 when empty. The sequencer keeps ts monotonic across restarts with it. */
  lastTs(): number;
  /** Flushes what is buffered, then releases the storage. */
  close(): Promise<void>;
}

/**
 * A snapshot frozen when it was taken. The engine state keeps changing after `snapshot()` returns and the
 * write happens later (after the journal covering it is durable), so it is serialized immediately.
 */
export interface SerializedSnapshot {
  seq: number;
  /** `ts` of the last command included (informational). */
  ts: number;
  /** JSON text of an EngineSnapshot. */
  json: string;
}

export interface SnapshotInfo {
  seq: number;
  /** When it was written (epoch ms). */
  savedAt: number;
  bytes: number;
}

export interface SnapshotStore {
  /** Stores atomically (a crash leaves either the old set or the new one), then prunes to the last N. */
  save(snapshot: SerializedSnapshot): Promise<void>;
  /**
   * The newest readable snapshot (with `atOrBefore`: the newest at or before that seq); an unreadable one
   * falls back to the one before.
   */
  latest(atOrBefore?: number): Promise<EngineSnapshot | undefined>;
  /** Stored snapshots, oldest first. */
  list(): Promise<SnapshotInfo[]>;
  close(): Promise<void>;
}

export function serializeSnapshot(snapshot: EngineSnapshot, ts: number): SerializedSnapshot {
  return { seq: snapshot.seq, ts, json: JSON.stringify(snapshot) };
}

/** Thrown for a journal that is not a gap-free sequence (corruption or a bug); recovery must not guess. */
export class JournalIntegrityError extends Error {
  override name = 'JournalIntegrityError';
}
