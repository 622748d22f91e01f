/**
 * Exactly-once commands across a takeover (issue 30): the outcome of each recent command a gateway request
 * carried, by the request's id. The id is journaled with the command (JournalEntry.requestId), so every engine
 * fills its ledger as it applies the log (a standby as it follows, a new leader as it catches up) and the
 * leader as it sequences. A gateway that lost its answer (the leader died or stalled) resends with the same id;
 * the leader that gets it answers from here instead of running the command twice.
 *
 * The ledger is not engine state: the engine is deterministic, so the reply a follower derives is the one the
 * leader gave. It holds the newest `capacity` ids; a retry comes within the gateway's retry window (seconds).
 * An engine restarted from a snapshot knows the ids of the commands after it (docs/cluster.md, "Failover").
 */
import { LRUCache } from 'lru-cache';
import type { CommandResult } from '../engine/records.js';

/** What a retry gets back: the command's reply and the seq a follower must reach to show it. */
export interface RecordedOutcome {
  seq: number;
  reply: CommandResult['reply'];
  /** A refusal that used no seq (not journaled): known only to the leader that gave it. */
  retracted?: true;
}

/** Ids kept: far above what arrives within the gateway's retry window at the throughput we measure. */
export const DEFAULT_LEDGER_CAPACITY = 100_000;

export class RequestLedger {
  private readonly outcomes: LRUCache<string, RecordedOutcome | Promise<RecordedOutcome>>;

  constructor(readonly capacity = DEFAULT_LEDGER_CAPACITY) {
    this.outcomes = new LRUCache({ max: capacity });
  }

  /** Ids held. */
  get size(): number {
    return this.outcomes.size;
  }

  /** The outcome recorded for the id, or the promise of one the leader is making durable. */
  get(requestId: string): RecordedOutcome | Promise<RecordedOutcome> | undefined {
    return this.outcomes.get(requestId);
  }

  /** A command applied from the log. */
  recordApplied(requestId: string, seq: number, result: CommandResult): void {
    this.outcomes.set(requestId, outcomeOf(seq, result));
  }

  /**
   * A command the leader sequenced and is making durable. A failure forgets it (not acknowledged: it may be
   * lost with this leader, and a new leader that finds it in the log records it as applied).
   */
  recordPending(requestId: string, outcome: Promise<RecordedOutcome>): void {
    this.outcomes.set(requestId, outcome);
    outcome.then(
      (done) => {
        if (this.outcomes.peek(requestId) === outcome) this.outcomes.set(requestId, done);
      },
      () => {
        if (this.outcomes.peek(requestId) === outcome) this.outcomes.delete(requestId);
      },
    );
  }
}

export function outcomeOf(seq: number, result: Pick<CommandResult, 'reply' | 'retracted'>): RecordedOutcome {
  return result.retracted === true ? { seq, reply: result.reply, retracted: true } : { seq, reply: result.reply };
}
