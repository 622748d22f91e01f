/**
 * The journal and snapshot contract (journal-contract.ts) on NATS JetStream: the command stream and the
 * object store bucket, on the machine's NATS (test/services.ts: skipped without it, failing under CI).
 * Each test uses its own cluster name, so its own stream and bucket, deleted afterwards.
 */
import { Objm } from '@nats-io/obj';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import { openObjectStoreSnapshots, snapshotObjectName } from '../../src/journal/object-store-snapshots.js';
import { skipUnless } from '../services.js';
import { dropCluster, freshCluster, natsConnection, publishGroup } from './jetstream-helpers.js';
import { journalContract, snapshotContract } from './journal-contract.js';

const skip = await skipUnless('nats');

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
