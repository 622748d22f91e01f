/**
 * The command path of the cluster (issue 29): a gateway sends each command to the engine leader over a
 * NATS request on `perpx.<cluster>.commands.submit`; the leader submits it to its Sequencer and answers once
 * the command is durable, with the engine's reply and the seq a follower must reach to show it. A refusal is
 * an ordinary answer (the engine's reply); only the absence of a leader, or a leader that cannot take
 * commands, is an error. Requests arrive on one subscription, so the leader sequences them in arrival order.
 */
import { RequestError, TimeoutError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import pino from 'pino';
import type { CommandInput } from '../engine/commands.js';
import type { CommandResult } from '../engine/records.js';
import { clusterNames } from '../journal/jetstream-names.js';
import { JournalWriteError } from '../journal/ports.js';
import { SequencerStoppedError } from '../sequencer/sequencer.js';
import { decodeAnswer, decodeCommand, encodeAnswer, encodeCommand, type SubmitAnswer } from './command-wire.js';
import { LeaderRefusedError, LeaderUnavailableError } from './errors.js';
import type { CommandSubmitter, SubmitReceipt } from './ports.js';

/** Queue group of the responders: were two leaders subscribed, each command would still be taken once. */
const LEADER_QUEUE = 'perpx-engine-leader';

export interface NatsCommandSubmitterOptions {
  nc: NatsConnection;
  cluster: string;
  /** How long a gateway waits for the leader's answer, ms (default 10,000: above the journal's ack wait). */
  timeoutMs?: number;
  /**
   * Where the leader is (issue 30): commands go to the subject of the epoch it names. Without it, to the
   * shared subject every leader of a one-engine cluster answers.
   */
  leader?: { readonly epoch: number | undefined; refresh(): Promise<number | undefined> };
  /**
   * How long a command waits for a leader while none listens (a takeover under way), retried every 100 ms,
   * ms (default 10,000). Safe to retry: with no responder the command was surely not applied.
   */
  waitForLeaderMs?: number;
}

const NO_LEADER_RETRY_MS = 100;

/** Gateway side. */
export class NatsCommandSubmitter implements CommandSubmitter {
  private readonly subject: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: NatsCommandSubmitterOptions) {
    this.subject = clusterNames(options.cluster).submitSubject;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  private leaderSubject(): string {
    return this.options.leader ? leaderSubjectOf(this.options.cluster, this.options.leader.epoch) : this.subject;
  }

  async submit(input: CommandInput): Promise<SubmitReceipt> {
    const encoded = encodeCommand(input);
    const giveUpAt = Date.now() + (this.options.waitForLeaderMs ?? 10_000);
    let reply: Msg | undefined;
    while (!reply) {
      const subject = this.leaderSubject();
      try {
        reply = await this.options.nc.request(subject, encoded, { timeout: this.timeoutMs });
      } catch (err) {
        const error = leaderError(err, subject, this.timeoutMs);
        if (error.outcome !== 'not-applied' || Date.now() >= giveUpAt) throw error;
        await new Promise((r) => setTimeout(r, NO_LEADER_RETRY_MS));
        await this.options.leader?.refresh().catch(() => undefined);
      }
    }
    let answer: SubmitAnswer;
    try {
      answer = decodeAnswer(reply.data);
    } catch (err) {
      // Not a JSON SyntaxError for the gateway to report as the client's: the leader's answer is unreadable.
      throw new LeaderUnavailableError(`unreadable answer from the engine leader on ${this.subject}: the command may or may not have been applied`, 'unknown', { cause: err });
    }
    if (!answer.ok) throw new LeaderRefusedError(answer.message, answer.code);
    return { result: answer.result, seq: answer.seq };
  }
}

export function leaderSubjectOf(cluster: string, epoch: number | undefined): string {
  const names = clusterNames(cluster);
  return epoch === undefined ? names.submitSubject : names.leaderSubmitSubject(epoch);
}

function leaderError(err: unknown, subject: string, timeoutMs: number): LeaderUnavailableError {
  if (err instanceof RequestError && err.isNoResponders()) {
    return new LeaderUnavailableError(`no engine leader is listening on ${subject}: the command was not applied`, 'not-applied', { cause: err });
  }
  if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError)) {
    return new LeaderUnavailableError(`the engine leader did not answer on ${subject} within ${timeoutMs} ms: the command may or may not have been applied`, 'unknown', { cause: err });
  }
  return new LeaderUnavailableError(`cannot reach the engine leader on ${subject}: ${err instanceof Error ? err.message : String(err)}`, 'unknown', { cause: err });
}

/** What the leader-side responder needs of the Sequencer. */
export interface CommandSequencer {
  submit(input: CommandInput): Promise<CommandResult>;
  /** Seq of the last command applied: read right after `submit` applied the command synchronously. */
  readonly seq: number;
}

export interface CommandResponderOptions {
  nc: NatsConnection;
  cluster: string;
  /** The lease epoch it leads under: it answers on that epoch's subject only (LeaderDirectory). */
  epoch?: number;
  sequencer: CommandSequencer;
  logger?: pino.Logger;
}

export interface CommandResponder {
  /** Stops taking commands; answers to those already taken are still sent. */
  close(): Promise<void>;
}

/** Leader side: answers the gateways' requests with the Sequencer's results, once durable. */
export function serveCommands(options: CommandResponderOptions): CommandResponder {
  const { nc, sequencer } = options;
  const log = options.logger ?? pino({ name: 'command-responder', level: process.env.LOG_LEVEL ?? 'info' });
  const answering = new Set<Promise<void>>();
  const respond = (msg: Msg, answer: SubmitAnswer): void => {
    if (!msg.respond(encodeAnswer(answer))) log.warn({ subject: msg.subject }, 'command request without a reply subject; answer dropped');
  };
  const sub: Subscription = nc.subscribe(leaderSubjectOf(options.cluster, options.epoch), {
    queue: LEADER_QUEUE,
    callback: (err, msg) => {
      if (err) {
        log.error({ err }, 'command subscription failed');
        return;
      }
      const input = decodeCommand(msg.data);
      if (input instanceof Error) {
        respond(msg, { ok: false, code: 'BAD_COMMAND', message: input.message });
        return;
      }
      // submit applies synchronously: the engine's seq right after it is this command's (or, for a refusal
      // that used no seq, the one its reply was decided on).
      const pending = sequencer.submit(input);
      const seq = sequencer.seq;
      const answered = pending.then(
        (result) => respond(msg, { ok: true, seq, result }),
        (e: unknown) => respond(msg, failureAnswer(e)),
      );
      answering.add(answered);
      void answered.finally(() => answering.delete(answered));
    },
  });
  return {
    close: async () => {
      sub.unsubscribe();
      await Promise.all(answering);
    },
  };
}

function failureAnswer(err: unknown): SubmitAnswer {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof SequencerStoppedError) return { ok: false, code: 'SHUTTING_DOWN', message: `the engine is stopping; the command was not accepted (${message})` };
  if (err instanceof JournalWriteError) return { ok: false, code: 'JOURNAL_UNAVAILABLE', message: `the engine cannot store commands (${err.code ?? message}); the command was not acknowledged` };
  return { ok: false, code: 'ENGINE_FAULT', message };
}
