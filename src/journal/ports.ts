/**
 * Durability ports: the command journal and the snapshot store. The sequencer and recovery only see these
 * interfaces, so an adapter for PostgreSQL or NATS JetStream can replace SQLite without touching them or
 * the engine.
 */
import type { Command } from '../engine/commands.js';
import type { EngineSnapshot, ExchangeEngine } from '../engine/api.js';

/** One journaled command. `command.ts` is the time the sequencer stamped; `seq` starts at 1. */
export interface JournalEntry {
  seq: number;
  command: Command;
  /**
   * The gateway request that carried the command (cluster journal only; issue 30): a retry with the same id,
   * on any leader, gets this command's recorded outcome instead of running it again.
   */
  requestId?: string;
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
   * `lastSeq() + 1` (the journal refuses gaps and reordering by throwing). `requestId`: see JournalEntry; a
   * journal that serves no cluster may drop it.
   */
  append(seq: number, command: Command, requestId?: string): void;
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
  /** engine.stateHash() of the state in `json`: a load restores it and must arrive at the same hash. */
  stateHash: string;
}

/** A stored snapshot whose bytes passed their checksum; its state still has to be restored and checked. */
export interface StoredSnapshot {
  snapshot: EngineSnapshot;
  /** The state hash recorded when it was taken. */
  stateHash: string;
}

export interface SnapshotInfo {
  seq: number;
  /** When it was written (epoch ms). */
  savedAt: number;
  bytes: number;
  /** Who wrote it, where the store records it (object store: a standby's label; unset for the leader's). */
  writer?: string;
}

export interface SnapshotStore {
  /** Stores atomically (a crash leaves either the old set or the new one), then prunes to the last N. */
  save(snapshot: SerializedSnapshot): Promise<void>;
  /**
   * Reads the snapshot at `seq` and checks its bytes against their checksum; throws SnapshotIntegrityError
   * when they do not match (or it is unreadable). Which snapshot to use, and the checks of the restored
   * state, are recovery's (`restoreNewestVerified` in sequencer/recovery.ts).
   */
  load(seq: number): Promise<StoredSnapshot>;
  /** Stored snapshots, oldest first. */
  list(): Promise<SnapshotInfo[]>;
  close(): Promise<void>;
}

/** Freezes the engine's state now: its JSON and its state hash. */
export function serializeSnapshot(engine: Pick<ExchangeEngine, 'snapshot' | 'stateHash'>, ts: number): SerializedSnapshot {
  const snapshot = engine.snapshot();
  return { seq: snapshot.seq, ts, json: JSON.stringify(snapshot), stateHash: engine.stateHash() };
}

/** A stored snapshot that must not be used: damaged bytes, a state that does not hash or check out. */
export class SnapshotIntegrityError extends Error {
  override name = 'SnapshotIntegrityError';
}

/**
 * A journal write failed (disk full, I/O error): nothing after the last durable seq is stored and the
 * journal refuses all further use. `code` is the storage's error code (SQLITE_FULL, SQLITE_IOERR_…).
 */
export class JournalWriteError extends Error {
  override name = 'JournalWriteError';
  constructor(message: string, readonly code: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
  }

  static from(err: unknown): JournalWriteError {
    if (err instanceof JournalWriteError) return err;
    const code = (err as { code?: unknown } | null)?.code;
    const message = err instanceof Error ? err.message : String(err);
    return new JournalWriteError(`journal write failed: ${message}`, typeof code === 'string' ? code : undefined, { cause: err });
  }
}

/** Thrown for a journal that is not a gap-free sequence (corruption or a bug); recovery must not guess. */
export class JournalIntegrityError extends Error {
  override name = 'JournalIntegrityError';
}
