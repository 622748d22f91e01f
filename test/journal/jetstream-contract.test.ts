/**
 * The journal and snapshot contract (journal-contract.ts) on NATS JetStream: the command stream and the
 * object store bucket, on the machine's NATS (test/services.ts: skipped without it, failing under CI).
 * Each test uses its own cluster name, so its own stream and bucket, deleted afterwards.
 */
import { after } from 'node:test';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import type { Command } from '../../src/engine/commands.js';
import { AppendBuffer } from '../../src/journal/append-buffer.js';
import { encodeGroups, payloadChecksum } from '../../src/journal/command-group-codec.js';
import { CRC_HEADER, FIRST_SEQ_HEADER, LAST_SEQ_HEADER, openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import { openObjectStoreSnapshots, snapshotObjectName } from '../../src/journal/object-store-snapshots.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { journalContract, snapshotContract } from './journal-contract.js';

const skip = await skipUnless('nats');
const connections: NatsConnection[] = [];
after(async () => {
  for (const nc of connections) await nc.close();
});

async function natsConnection(): Promise<NatsConnection> {
  connections[0] ??= await connect({ servers: NATS_TEST_URL, name: 'perpx journal contract' });
  return connections[0];
}

export const freshCluster = () => `test_${randomBytes(6).toString('hex')}`;

/** Deletes the stream or bucket of a test cluster (missing ones are fine). */
export async function dropCluster(nc: NatsConnection, cluster: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const names = clusterNames(cluster);
  for (const stream of [names.commandStream, `OBJ_${names.snapshotBucket}`]) await jsm.streams.delete(stream).catch(() => undefined);
}

/** A well-formed group message for commands from..to, published behind the journal's back. */
async function publishGroup(nc: NatsConnection, cluster: string, from: number, to: number, damage: boolean): Promise<void> {
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

journalContract('JetStream', async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  return {
    open: () => openJetStreamJournal({ nc, cluster }),
    damage: async (durable) => {
      // A damaged message in the middle of the log (bit rot under the checksum), then a sound one after it.
      await publishGroup(nc, cluster, durable + 1, durable + 2, true);
      await publishGroup(nc, cluster, durable + 3, durable + 4, false);
      return { where: new RegExp(`JetStream message 2 of stream ${clusterNames(cluster).commandStream} fails its checksum`) };
    },
    dispose: () => dropCluster(nc, cluster),
  };
}, skip);

snapshotContract('JetStream object store', async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  return {
    open: (keep) => openObjectStoreSnapshots({ nc, cluster, keep }),
    damage: async (seq) => {
      // Rewritten through the object store (its digest is then right): only our own checksum can tell.
      const bucket = await new Objm(nc).open(clusterNames(cluster).snapshotBucket);
      const bytes = (await bucket.getBlob(snapshotObjectName(seq)))!;
      bytes[bytes.length - 2] ^= 1;
      await bucket.putBlob({ name: snapshotObjectName(seq) }, bytes);
    },
    dispose: () => dropCluster(nc, cluster),
  };
}, skip);
