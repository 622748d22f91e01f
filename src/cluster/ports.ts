/**
 * The cluster's ports (issue 29): what a gateway needs from the engine leader, behind interfaces so the
 * NATS adapters can be swapped (or faked in-process) without the gateway changing.
 */
import type { EngineQueries } from '../engine/api.js';
import type { CommandInput } from '../engine/commands.js';
import type { CommandResult } from '../engine/records.js';

/** The engine's queries without `apply`: only the follower changes its engine, from the log. */
export type ReadOnlyEngine = EngineQueries;

/** A read-only copy of the leader's engine, kept current by applying the committed command log. */
export interface EngineFollower {
  /** Seq of the last command applied. */
  readonly seq: number;
  readonly engine: ReadOnlyEngine;
  /**
   * Resolves once `seq` is applied (read-your-writes: a read after the caller's own command waits for its
   * seq). Rejects with FollowerTimeoutError after `timeoutMs`, or with the failure if the follower stopped.
   */
  waitFor(seq: number, timeoutMs: number): Promise<void>;
  /** Stops following; pending waits reject. */
  close(): Promise<void>;
}

/** A command's outcome as the leader answered it, once durable (its events reach the gateway by its follower). */
export interface SubmitReceipt {
  result: Pick<CommandResult, 'reply' | 'retracted'>;
  /**
   * Seq of the state the reply was decided on: the command's own seq, or for a refusal that used no seq the
   * seq before it. A follower at this seq shows what the reply shows.
   */
  seq: number;
}

/** Gateway side of the command path: hands a command to the engine leader. */
export interface CommandSubmitter {
  /**
   * Rejects with LeaderUnavailableError when no leader answers in time. A command is taken at most once, even
   * when it is resent to the next leader after a takeover (request ids, src/cluster/request-ledger.ts).
   */
  submit(input: CommandInput): Promise<SubmitReceipt>;
}
