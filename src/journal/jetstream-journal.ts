/**
 * Command journal on a NATS JetStream stream: the replicated log of the cluster mode (issue 29). The leader
 * appends on `perpx.<cluster>.log.append`; the stream listens on `perpx.<cluster>.log.*` (jetstream-names.ts says why).
 *
 * One message per group commit (command-group-codec.ts), so one ack covers however many commands arrived
 * since the last flush, as SQLite's one fsync does. Every publish carries the stream sequence it expects to
 * follow (`Nats-Expected-Last-Sequence`): a second writer — a deposed leader, a process started twice — is
 * refused by the server on its next append instead of interleaving its commands (fencing), and this journal
 * then fails stop. Flushes may overlap (the sequencer pipelines them): each publish names the stream
 * sequence its predecessor will get, and the server takes one connection's publishes in order.
 *
 * Headers: `Perpx-First-Seq` / `Perpx-Last-Seq` (the command seqs inside, so a read can find its starting
 * message by binary search) and `Perpx-Crc32` of the payload. A read checks each message's checksum and
 * that command seqs continue without a gap from message to message, and names the stream message at fault.
 *
 * Durability is the server's: a 1-replica stream acknowledges after its write (fsynced only every
 * `sync_interval`, 2 min by default, unless the server sets `sync_interval: always`); R3 acknowledges once a
 * quorum holds it. docs/operations.md, "JetStream journal", says what production sets.
 */
import {
  DeliverPolicy, DiscardPolicy, jetstream, jetstreamManager, JetStreamApiError, RetentionPolicy, StorageType,
  type JetStreamClient, type JetStreamManager, type StreamConfig,
} from '@nats-io/jetstream';
import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { BufferedJournal } from './buffered-journal.js';
import { appendWithRetry, WRONG_LAST_SEQUENCE } from './jetstream-append-retry.js';
import { decodeGroup, encodeGroups, payloadChecksum, type EncodedGroup } from './command-group-codec.js';
import { clusterNames } from './jetstream-names.js';
import { JournalIntegrityError, JournalWriteError, type JournalEntry } from './ports.js';

export const FIRST_SEQ_HEADER = 'Perpx-First-Seq';
export const LAST_SEQ_HEADER = 'Perpx-Last-Seq';
export const CRC_HEADER = 'Perpx-Crc32';
/** Room left in a message for its headers and the protocol line. */
const HEADER_ROOM = 1024;
/** Bytes a reader asks the server for at a time (a few groups). */
const READ_WINDOW_BYTES = 8 << 20;
/** How long a live follower's pull request lasts before it is renewed, ms. */
const FOLLOW_PULL_EXPIRES_MS = 5000;

export interface JetStreamJournalOptions {
  /** Open connection; the caller closes it after the journal. */
  nc: NatsConnection;
  /** Cluster name: the stream is PERPX_<cluster>_COMMANDS on subjects perpx.<cluster>.log.*. */
  cluster: string;
  /** Stream replicas when the stream is created (1 on one server; 3 in production). Default 1. */
  replicas?: number;
  /** Ack wait of one append attempt, ms (default 5,000). */
  timeoutMs?: number;
  /** How long an append is retried after a lost connection or ack (NATS restarting), ms (default 60,000); then fail-stop. */
  retryForMs?: number;
}

/** The stream's settings; a log must never lose its start, so no age, count or size limit. */
export function commandStreamConfig(cluster: string, replicas: number): Partial<StreamConfig> & { name: string } {
  const names = clusterNames(cluster);
  return {
    name: names.commandStream,
    subjects: [names.commandStreamSubject],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    num_replicas: replicas,
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
  };
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  let existing: StreamConfig;
  try {
    existing = (await jsm.streams.info(config.name)).config;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.status !== 404) throw err;
    await jsm.streams.add(config);
    return;
  }
  if (existing.subjects.length !== 1 || existing.subjects[0] !== config.subjects![0]) {
    // Made by an older version, on the literal subject `perpx.<cluster>.commands`: moved to the wildcard one.
    try {
      existing = (await jsm.streams.update(config.name, { ...existing, subjects: config.subjects })).config;
    } catch (err) {
      throw new Error(`stream ${config.name} listens on ${existing.subjects.join(', ')}, not ${config.subjects!.join(', ')}: `
        + `run \`nats stream edit ${config.name} --subjects '${config.subjects![0]}'\` as a user allowed to (${err instanceof Error ? err.message : String(err)})`, { cause: err });
    }
  }
  // A stream made by hand (or by an older version) must still keep every message.
  const loses = existing.storage !== StorageType.File || existing.retention !== RetentionPolicy.Limits || existing.max_age > 0
    || existing.max_msgs > 0 || existing.max_bytes > 0;
  if (loses) {
    throw new Error(`stream ${config.name} would drop or not persist commands (storage ${existing.storage}, retention ${existing.retention}, `
      + `max_age ${existing.max_age}, max_msgs ${existing.max_msgs}, max_bytes ${existing.max_bytes}): fix it before starting`);
  }
}

export class JetStreamJournal extends BufferedJournal {
  private readonly js: JetStreamClient;
  private readonly subject: string;
  private readonly stream: string;
  private readonly maxGroupBytes: number;
  private readonly timeoutMs: number;
  /** Stream sequence the next publish expects to follow. */
  private streamSeq: number;
  /** The newest flush; acks arrive in order, so it covers every earlier one. */
  private newest: Promise<void> = Promise.resolve();
  /** The newest group's append: the next one is retried only after it. */
  private lastAppend: Promise<unknown> = Promise.resolve();
  /** Names this writer's appends (Nats-Msg-Id), so the server drops a retried copy of a stored one. */
  private readonly writerId = randomBytes(8).toString('hex');

  constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    cluster: string,
    tail: { streamSeq: number; seq: number; ts: number },
    timeoutMs = 5000,
    private readonly retryForMs = 60_000,
  ) {
    super(tail);
    const names = clusterNames(cluster);
    this.js = jetstream(nc);
    this.subject = names.commandSubject;
    this.stream = names.commandStream;
    this.maxGroupBytes = Math.max(4096, nc.info!.max_payload - HEADER_ROOM);
    this.timeoutMs = timeoutMs;
    this.streamSeq = tail.streamSeq;
  }

  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending.empty) return this.newest;
    const batch = this.pending.take();
    const groups = encodeGroups(batch, this.maxGroupBytes);
    this.pending.recycle(batch);
    const acks = groups.map((g) => this.publish(g, this.streamSeq++));
    const lastSeq = groups[groups.length - 1].lastSeq;
    this.newest = Promise.all(acks).then(
      () => {
        if (lastSeq > this.committedSeq) this.committedSeq = lastSeq;
      },
      (err: unknown) => {
        throw this.fail(err);
      },
    );
    return this.newest;
  }

  private publish(group: EncodedGroup, expectedLastSeq: number): Promise<unknown> {
    const h = headers();
    h.set(FIRST_SEQ_HEADER, String(group.firstSeq));
    h.set(LAST_SEQ_HEADER, String(group.lastSeq));
    h.set(CRC_HEADER, String(payloadChecksum(group.payload)));
    const send = () => this.js.publish(this.subject, group.payload, {
      headers: h, msgID: `${this.writerId}-${group.lastSeq}`, expect: { lastSequence: expectedLastSeq, streamName: this.stream }, timeout: this.timeoutMs,
    });
    const appended = appendWithRetry(send, this.lastAppend, this.retryForMs);
    this.lastAppend = appended;
    return appended;
  }

  /** Fail-stop: what was not acknowledged may or may not be in the stream; nothing more may be appended here. */
  private fail(err: unknown): Error {
    if (!this.failure) {
      this.failure = err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE
        ? new JournalWriteError(`journal append refused: another writer appended to stream ${this.stream} (wrong last sequence); this process is fenced off`, 'JETSTREAM_WRONG_LAST_SEQUENCE', { cause: err })
        : JournalWriteError.from(err);
    }
    return this.failure;
  }

  read(fromSeqExclusive: number): AsyncGenerator<JournalEntry> {
    return readCommandStream(this.nc, this.jsm, this.stream, fromSeqExclusive);
  }
}

/** A stored message's group, checked against its headers; `streamSeq` names it in errors. */
function verifiedGroup(stream: string, streamSeq: number, payload: Uint8Array, h: MsgHdrs | undefined) {
  const where = `JetStream message ${streamSeq} of stream ${stream}`;
  const first = Number(h?.get(FIRST_SEQ_HEADER));
  const last = Number(h?.get(LAST_SEQ_HEADER));
  const crc = h?.get(CRC_HEADER);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || !crc) throw new JournalIntegrityError(`${where} lacks the journal headers`);
  if (String(payloadChecksum(payload)) !== crc) throw new JournalIntegrityError(`${where} fails its checksum: the stored commands are damaged`);
  let group: ReturnType<typeof decodeGroup>;
  try {
    group = decodeGroup(payload);
  } catch (err) {
    throw new JournalIntegrityError(`${where} does not decode: ${(err as Error).message}`, { cause: err });
  }
  if (group.firstSeq !== first || group.firstSeq + group.entries.length - 1 !== last) {
    throw new JournalIntegrityError(`${where} holds commands ${group.firstSeq}..${group.firstSeq + group.entries.length - 1}, its headers say ${first}..${last}`);
  }
  return group;
}

/** First and last command seq a stored message holds, from its headers (cheap: no decode). */
async function commandRange(jsm: JetStreamManager, stream: string, streamSeq: number): Promise<{ first: number; last: number }> {
  const m = await jsm.streams.getMessage(stream, { seq: streamSeq });
  if (!m) throw new JournalIntegrityError(`JetStream message ${streamSeq} of stream ${stream} is missing`);
  return { first: Number(m.header.get(FIRST_SEQ_HEADER)), last: Number(m.header.get(LAST_SEQ_HEADER)) };
}

/** Stream sequence of the first message holding a command after `fromSeqExclusive` (binary search on headers). */
async function startMessage(jsm: JetStreamManager, stream: string, firstStreamSeq: number, lastStreamSeq: number, fromSeqExclusive: number): Promise<number | undefined> {
  let lo = firstStreamSeq;
  let hi = lastStreamSeq;
  if ((await commandRange(jsm, stream, hi)).last <= fromSeqExclusive) return undefined;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if ((await commandRange(jsm, stream, mid)).last <= fromSeqExclusive) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Durable entries after `fromSeqExclusive`, up to the stream's end when the read starts, through an ordered
 * consumer (ephemeral, flow controlled, recreated by the client after a gap in delivery).
 */
export async function* readCommandStream(nc: NatsConnection, jsm: JetStreamManager, stream: string, fromSeqExclusive: number): AsyncGenerator<JournalEntry> {
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0) return;
  const start = await startMessage(jsm, stream, state.first_seq, state.last_seq, fromSeqExclusive);
  if (start === undefined) return;
  yield* entriesFrom(nc, stream, start, fromSeqExclusive, { lastStreamSeq: state.last_seq });
}

/**
 * Every entry after `fromSeqExclusive`, then each new one as it is appended, until `signal` aborts (the
 * generator then ends): what an engine follower applies. Same checks as `readCommandStream`.
 */
export async function* followCommandStream(nc: NatsConnection, jsm: JetStreamManager, stream: string, fromSeqExclusive: number, signal: AbortSignal): AsyncGenerator<JournalEntry> {
  const { state } = await jsm.streams.info(stream);
  const start = state.messages === 0 ? undefined : await startMessage(jsm, stream, state.first_seq, state.last_seq, fromSeqExclusive);
  // Nothing after `fromSeqExclusive` stored yet: start at the next message the leader appends.
  yield* entriesFrom(nc, stream, start ?? state.last_seq + 1, fromSeqExclusive, { signal });
}

/** Entries of the messages from stream sequence `start`, checked (checksum, contiguity), each one after `fromSeqExclusive`. */
async function* entriesFrom(
  nc: NatsConnection, stream: string, start: number, fromSeqExclusive: number,
  until: { lastStreamSeq?: number; signal?: AbortSignal },
): AsyncGenerator<JournalEntry> {
  if (until.signal?.aborted) return;
  const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start });
  // A live follower renews its pull every few seconds (default 30 s), so after a NATS restart it notices
  // the lost pull and resumes within seconds instead of half a minute.
  const messages = await consumer.consume({ max_bytes: READ_WINDOW_BYTES, ...(until.signal ? { expires: FOLLOW_PULL_EXPIRES_MS } : {}) });
  const stop = () => void messages.stop();
  until.signal?.addEventListener('abort', stop, { once: true });
  if (until.signal?.aborted) stop(); // aborted while the consumer was being set up
  let next = fromSeqExclusive + 1;
  try {
    for await (const m of messages) {
      const group = verifiedGroup(stream, m.seq, m.data, m.headers);
      const lastInGroup = group.firstSeq + group.entries.length - 1;
      if (group.firstSeq > next || lastInGroup < next) {
        throw new JournalIntegrityError(`JetStream message ${m.seq} of stream ${stream} holds commands ${group.firstSeq}..${lastInGroup}, expected one holding ${next}: the log has a gap or overlap`);
      }
      for (const e of group.entries) if (e.seq >= next) yield e;
      next = lastInGroup + 1;
      if (until.lastStreamSeq !== undefined && m.seq >= until.lastStreamSeq) break;
      if (until.signal?.aborted) break;
    }
  } finally {
    until.signal?.removeEventListener('abort', stop);
    messages.stop();
  }
}

/** The last stored message's stream and command seqs and ts (zeros for an empty stream). */
export async function readCommandTail(jsm: JetStreamManager, stream: string): Promise<{ streamSeq: number; seq: number; ts: number }> {
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0) return { streamSeq: state.last_seq, seq: 0, ts: 0 };
  const m = await jsm.streams.getMessage(stream, { seq: state.last_seq });
  if (!m) throw new JournalIntegrityError(`JetStream message ${state.last_seq} of stream ${stream} is missing`);
  const group = verifiedGroup(stream, m.seq, m.data, m.header);
  return { streamSeq: m.seq, seq: group.firstSeq + group.entries.length - 1, ts: group.lastTs };
}

/** Creates the stream if missing (or checks it keeps everything), then loads the tail. */
export async function openJetStreamJournal(options: JetStreamJournalOptions): Promise<JetStreamJournal> {
  const { nc, cluster } = options;
  const jsm = await jetstreamManager(nc);
  const config = commandStreamConfig(cluster, options.replicas ?? 1);
  await ensureStream(jsm, config);
  const tail = await readCommandTail(jsm, config.name);
  return new JetStreamJournal(nc, jsm, cluster, tail, options.timeoutMs, options.retryForMs);
}
