/** A NATS connection for the JetStream journal tests, and per-test cluster names whose resources are dropped after. */
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import type { Command } from '../../src/engine/commands.js';
import { AppendBuffer } from '../../src/journal/append-buffer.js';
import { encodeGroups, payloadChecksum } from '../../src/journal/command-group-codec.js';
import { CRC_HEADER, FIRST_SEQ_HEADER, LAST_SEQ_HEADER } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import { NATS_TEST_URL } from '../services.js';

let shared: Promise<NatsConnection> | undefined;
// Registered at import, so on the file's root: it runs once all of the file's tests are done.
after(async () => {
  if (shared) await (await shared).close();
});

/** One connection per test file. */
export function natsConnection(): Promise<NatsConnection> {
  shared ??= connect({ servers: NATS_TEST_URL, name: 'perpx journal tests' });
  return shared;
}

export const freshCluster = (): string => `test_${randomBytes(6).toString('hex')}`;

/** Deletes a test cluster's command stream, snapshot, payout and simchain buckets (missing ones are fine). */
export async function dropCluster(nc: NatsConnection, cluster: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const names = clusterNames(cluster);
  for (const stream of [names.commandStream, `OBJ_${names.snapshotBucket}`, names.payoutStream, names.simchainStream]) await jsm.streams.delete(stream).catch(() => undefined);
}

/** A well-formed group message for commands from..to, published behind the journal's back. */
export async function publishGroup(nc: NatsConnection, cluster: string, from: number, to: number, damage = false): Promise<void> {
  const buffer = new AppendBuffer(from - 1, 0);
  for (let seq = from; seq <= to; seq++) {
    buffer.append(seq, { kind: 'funds.deposit', ts: 5000 + seq, userId: 1, amount: '1', transferId: `x${seq}` } as Command);
  }
  const [group] = encodeGroups(buffer.take(), 1 << 20);
  const h = headers();
  h.set(FIRST_SEQ_HEADER, String(group.firstSeq));
  h.set(LAST_SEQ_HEADER, String(group.lastSeq));
  h.set(CRC_HEADER, String(payloadChecksum(group.payload)));
  const payload = Uint8Array.from(group.payload);
  if (damage) payload[payload.length - 3] ^= 1;
  await jetstream(nc).publish(clusterNames(cluster).commandSubject, payload, { headers: h });
}

