/**
 * Exactly-once commands across a takeover (issue 30): the answer to each recent command a gateway request
 * carried, by the request's id. The id is journaled with the command (JournalEntry.requestId), so every engine
 * fills its ledger as it applies the log (a standby as it follows, a new leader as it catches up) and the
 * leader as it sequences. A gateway that lost its answer (the leader died or stalled) resends with the same id;
 * the leader that gets it answers from here instead of running the command twice.
 *
 * The ledger is not engine state: the engine is deterministic, so the reply a follower derives is the one the
 * leader gave. Answers are kept encoded (command-wire.ts), bytes the garbage collector does not trace, for
 * the newest `capacity` ids; a retry comes within the gateway's retry window (seconds). An engine restarted
 * from a snapshot knows the ids of the commands after it (docs/cluster.md, "Failover").
 */
import { LRUCache } from 'lru-cache';
import type { CommandResult } from '../engine/records.js';
import type { JournalEntry } from '../journal/ports.js';
import { encodeAnswer } from './command-wire.js';

/** What a retry gets back: the command's reply and the seq a follower must reach to show it. */
export interface RecordedOutcome {
  seq: number;
  reply: CommandResult['reply'];
  /** A refusal that used no seq (not journaled): known only to the leader that gave it. */
  retracted?: true;
}

/**
 * Ids kept: 50,000 answers of ~650 bytes (an order's) are ~32 MB, and cover half a minute at the cluster's
 * measured throughput, well above the gateway's retry window.
 */
export const DEFAULT_LEDGER_CAPACITY = 50_000;

export class RequestLedger {
  private readonly answers: LRUCache<string, Uint8Array | Promise<Uint8Array>>;

  constructor(readonly capacity = DEFAULT_LEDGER_CAPACITY) {
    this.answers = new LRUCache({ max: capacity });
  }

  /** Ids held. */
  get size(): number {
    return this.answers.size;
  }

  /** The encoded answer recorded for the id, or the promise of one the leader is making durable. */
  get(requestId: string): Uint8Array | Promise<Uint8Array> | undefined {
    return this.answers.get(requestId);
  }

  /** A command applied from the log (by a standby, or by a new leader catching up); one without an id is not kept. */
  recordApplied(entry: Pick<JournalEntry, 'seq' | 'requestId'>, result: CommandResult): void {
    if (entry.requestId === undefined) return;
    this.answers.set(entry.requestId, encodeAnswer({ ok: true, ...outcomeOf(entry.seq, result) }));
  }

  /**
   * A command the leader sequenced and is making durable, with the answer it will send. A failure forgets it
   * (not acknowledged: it may be lost with this leader, and a new leader that finds it in the log records it).
   */
  recordPending(requestId: string, answer: Promise<Uint8Array>): void {
    this.answers.set(requestId, answer);
    answer.then(
      (bytes) => {
        if (this.answers.peek(requestId) === answer) this.answers.set(requestId, bytes);
      },
      () => {
        if (this.answers.peek(requestId) === answer) this.answers.delete(requestId);
      },
    );
  }
}

export function outcomeOf(seq: number, result: Pick<CommandResult, 'reply' | 'retracted'>): RecordedOutcome {
  return result.retracted === true ? { seq, reply: result.reply, retracted: true } : { seq, reply: result.reply };
}
