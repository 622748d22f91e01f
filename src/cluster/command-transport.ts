/**
 * The command path of the cluster (issue 29): a gateway sends each command to the engine leader over a
 * NATS request on `perpx.<cluster>.commands.submit`; the leader submits it to its Sequencer and answers once
 * the command is durable, with the engine's reply and the seq a follower must reach to show it. A refusal is
 * an ordinary answer (the engine's reply); only the absence of a leader, or a leader that cannot take
 * commands, is an error. Requests arrive on one subscription, so the leader sequences them in arrival order.
 */
import { randomBytes } from 'node:crypto';
import { headers, RequestError, TimeoutError, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import pino from 'pino';
import type { CommandInput } from '../engine/commands.js';
import type { CommandResult } from '../engine/records.js';
import { clusterNames } from '../journal/jetstream-names.js';
import { isJournalableRequestId } from '../journal/command-group-codec.js';
import { JournalWriteError } from '../journal/ports.js';
import { SequencerStoppedError } from '../sequencer/sequencer.js';
import { decodeAnswer, decodeCommand, encodeAnswer, encodeCommand, type SubmitAnswer } from './command-wire.js';
import { LeaderRefusedError, LeaderUnavailableError } from './errors.js';
import type { CommandSubmitter, SubmitReceipt } from './ports.js';
import { outcomeOf, type RequestLedger } from './request-ledger.js';

/** Header of a command request naming the gateway request (journaled with the command). */
export const REQUEST_ID_HEADER = 'Perpx-Request-Id';

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
  leader?: {
    readonly epoch: number | undefined;
    refresh(): Promise<number | undefined>;
    /** Calls back with each newer epoch (LeaderDirectory): an answer awaited from the old leader is given up. */
    onChange?(listener: (epoch: number) => void): () => void;
  };
  /**
   * How long a command waits for a leader while none listens (a takeover under way), retried every 100 ms,
   * ms (default 10,000). Safe to retry: with no responder the command was surely not applied.
   */
  waitForLeaderMs?: number;
}

const NO_LEADER_RETRY_MS = 100;

/** Refusals of a leader that is stepping down or cut off: the next leader takes the command (by its id). */
const RETRIED_REFUSALS = new Set(['SHUTTING_DOWN', 'JOURNAL_UNAVAILABLE']);

/** The in-flight request was abandoned because another leader took over: resend to it. */
const LEADER_CHANGED = Symbol('leader changed');

/**
 * Gateway side. Each command gets a request id, unique per gateway process. The command is resent with the
 * same id while no leader takes it (none listening, a takeover, a leader stepping down), and at once when the
 * lease names a new leader while an answer is awaited: a leader that already has the id answers with the
 * recorded outcome (RequestLedger), so a resent command never runs twice.
 */
export class NatsCommandSubmitter implements CommandSubmitter {
  private readonly subject: string;
  private readonly timeoutMs: number;
  private readonly idPrefix = `${randomBytes(9).toString('base64url')}-`;
  private nextId = 0;

  constructor(private readonly options: NatsCommandSubmitterOptions) {
    this.subject = clusterNames(options.cluster).submitSubject;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  private leaderSubject(): string {
    return this.options.leader ? leaderSubjectOf(this.options.cluster, this.options.leader.epoch) : this.subject;
  }

  async submit(input: CommandInput): Promise<SubmitReceipt> {
    const encoded = encodeCommand(input);
    const h = headers();
    h.set(REQUEST_ID_HEADER, this.idPrefix + (this.nextId++).toString(36));
    const giveUpAt = Date.now() + (this.options.waitForLeaderMs ?? 10_000);
    for (;;) {
      const subject = this.leaderSubject();
      let failure: Error;
      try {
        const reply = await this.request(subject, encoded, h);
        if (reply === LEADER_CHANGED) continue;
        const answer = readAnswer(reply, subject);
        if (answer.ok) return { seq: answer.seq, result: answer.retracted ? { reply: answer.reply, retracted: true } : { reply: answer.reply } };
        failure = new LeaderRefusedError(answer.message, answer.code);
        if (!RETRIED_REFUSALS.has(answer.code)) throw failure;
      } catch (err) {
        if (err instanceof LeaderRefusedError || (err instanceof LeaderUnavailableError && err.outcome === 'unknown' && !this.options.leader)) throw err;
        failure = err instanceof LeaderUnavailableError ? err : leaderError(err, subject, this.timeoutMs);
      }
      if (Date.now() >= giveUpAt) throw failure;
      await new Promise((r) => setTimeout(r, NO_LEADER_RETRY_MS));
      await this.options.leader?.refresh().catch(() => undefined);
    }
  }

  /** The leader's reply, or LEADER_CHANGED once the lease names a newer leader than the one asked. */
  private request(subject: string, data: Uint8Array, h: MsgHdrs): Promise<Msg | typeof LEADER_CHANGED> {
    const asked = this.options.nc.request(subject, data, { timeout: this.timeoutMs, headers: h });
    const leader = this.options.leader;
    if (!leader?.onChange) return asked;
    const epoch = leader.epoch;
    let unsubscribe: (() => void) | undefined;
    const changed = new Promise<typeof LEADER_CHANGED>((resolve) => {
      unsubscribe = leader.onChange!((e) => {
        if (epoch === undefined || e > epoch) resolve(LEADER_CHANGED);
      });
    });
    // An abandoned request still ends (answer or timeout); nobody awaits it.
    asked.catch(() => undefined);
    return Promise.race([asked, changed]).finally(() => unsubscribe?.());
  }
}

function readAnswer(reply: Msg, subject: string): SubmitAnswer {
  try {
    return decodeAnswer(reply.data);
  } catch (err) {
    // Not a JSON SyntaxError for the gateway to report as the client's: the leader's answer is unreadable.
    throw new LeaderRefusedError(`unreadable answer from the engine leader on ${subject} (${(err as Error).message})`, 'BAD_ANSWER');
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
  submit(input: CommandInput, requestId?: string): Promise<CommandResult>;
  /** Seq of the last command applied: read right after `submit` applied the command synchronously. */
  readonly seq: number;
}

export interface CommandResponderOptions {
  nc: NatsConnection;
  cluster: string;
  /** The lease epoch it leads under: it answers on that epoch's subject only (LeaderDirectory). */
  epoch?: number;
  sequencer: CommandSequencer;
  /** Outcomes by request id (the engine process's, filled from the log too): a resent command is answered from it. */
  requests?: RequestLedger;
  logger?: pino.Logger;
}

export interface CommandResponder {
  /** Stops taking commands; answers to those already taken are still sent. */
  close(): Promise<void>;
}

/** Leader side: answers the gateways' requests with the Sequencer's results, once durable. */
export function serveCommands(options: CommandResponderOptions): CommandResponder {
  const { nc, sequencer, requests } = options;
  const log = options.logger ?? pino({ name: 'command-responder', level: process.env.LOG_LEVEL ?? 'info' });
  const answering = new Set<Promise<void>>();
  const respondBytes = (msg: Msg, bytes: Uint8Array): void => {
    if (!msg.respond(bytes)) log.warn({ subject: msg.subject }, 'command request without a reply subject; answer dropped');
  };
  const respond = (msg: Msg, answer: SubmitAnswer): void => respondBytes(msg, encodeAnswer(answer));
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
      const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
      if (requestId !== undefined && !isJournalableRequestId(requestId)) {
        respond(msg, { ok: false, code: 'BAD_COMMAND', message: `${REQUEST_ID_HEADER} must be 1 to 128 printable ASCII characters` });
        return;
      }
      let answer = requestId === undefined ? undefined : requests?.get(requestId);
      if (answer === undefined) {
        // submit applies synchronously: the engine's seq right after it is this command's (or, for a refusal
        // that used no seq, the one its reply was decided on).
        const pending = sequencer.submit(input, requestId);
        const seq = sequencer.seq;
        answer = pending.then((result) => encodeAnswer({ ok: true, ...outcomeOf(seq, result) }));
        if (requestId !== undefined) requests?.recordPending(requestId, answer);
      }
      const answered = Promise.resolve(answer).then(
        (bytes) => respondBytes(msg, bytes),
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
