/**
 * What only the JetStream journal has: the stream it creates (file storage, nothing ever discarded), one
 * message per group commit cut under the server's message size limit, the fencing error a deposed writer
 * gets, a log with a gap refused on read, a stream that would drop commands refused at open, and an older
 * stream on the literal subject moved to the wildcard one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Command } from '../../src/engine/commands.js';
import { commandStreamConfig, openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import { JournalIntegrityError, JournalWriteError } from '../../src/journal/ports.js';
import { skipUnless } from '../services.js';
import { dropCluster, freshCluster, natsConnection, publishGroup } from './jetstream-helpers.js';
import { entries } from './journal-contract.js';

const skip = await skipUnless('nats');
const cmd = (i: number, transferId = `t${i}`): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1, amount: String(i), transferId });

async function withCluster(body: (cluster: string) => Promise<void>): Promise<void> {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    await body(cluster);
  } finally {
    await dropCluster(nc, cluster);
  }
}

test('the stream: file storage, limits that never discard, one message per group within the size limit', { skip }, () => withCluster(async (cluster) => {
  const nc = await natsConnection();
  const j = await openJetStreamJournal({ nc, cluster });
  const jsm = await jetstreamManager(nc);
  const names = clusterNames(cluster);
  const { config } = await jsm.streams.info(names.commandStream);
  assert.deepEqual(
    [config.subjects, config.storage, config.retention, config.discard, config.num_replicas, config.max_age, config.max_msgs, config.max_bytes],
    [[names.commandStreamSubject], 'file', 'limits', 'new', 1, 0, -1, -1],
  );
  for (let i = 1; i <= 7; i++) j.append(i, cmd(i));
  await j.flush();
  assert.equal((await jsm.streams.info(names.commandStream)).state.messages, 1, 'a group commit is one message');
  // A group bigger than the server's max_payload is cut into several messages, each within it.
  const big = 'x'.repeat(1000);
  const n = Math.ceil((nc.info!.max_payload * 2.5) / big.length);
  for (let i = 8; i < 8 + n; i++) j.append(i, cmd(i, `${big}${i}`));
  await j.flush();
  const { state } = await jsm.streams.info(names.commandStream);
  assert.ok(state.messages >= 4, `${state.messages} messages`);
  for (let s = 2; s <= state.last_seq; s++) {
    const m = (await jsm.streams.getMessage(names.commandStream, { seq: s }))!;
    assert.ok(m.data.length <= nc.info!.max_payload);
  }
  assert.deepEqual((await entries(j.read(0))).map((e) => e.seq), Array.from({ length: 7 + n }, (_, k) => k + 1));
  await j.close();
}));

test('a deposed writer is told it was fenced off', { skip }, () => withCluster(async (cluster) => {
  const nc = await natsConnection();
  const deposed = await openJetStreamJournal({ nc, cluster });
  const leader = await openJetStreamJournal({ nc, cluster });
  leader.append(1, cmd(1));
  await leader.flush();
  deposed.append(1, cmd(1));
  await assert.rejects(deposed.flush(), (err: Error) => {
    assert.ok(err instanceof JournalWriteError);
    assert.equal(err.code, 'JETSTREAM_WRONG_LAST_SEQUENCE');
    assert.match(err.message, /fenced/);
    return true;
  });
  assert.equal(deposed.durableSeq(), 0);
  await leader.close();
}));

test('a log with missing commands between two messages is refused on read', { skip }, () => withCluster(async (cluster) => {
  const nc = await natsConnection();
  const j = await openJetStreamJournal({ nc, cluster });
  for (let i = 1; i <= 3; i++) j.append(i, cmd(i));
  await j.flush();
  await j.close();
  await publishGroup(nc, cluster, 6, 8); // 4 and 5 missing
  const reopened = await openJetStreamJournal({ nc, cluster });
  assert.equal(reopened.lastSeq(), 8, 'the tail is the last message');
  await assert.rejects(entries(reopened.read(0)), (err: Error) => {
    assert.ok(err instanceof JournalIntegrityError);
    assert.match(err.message, /JetStream message 2 of stream \S+ holds commands 6\.\.8, expected one holding 4/);
    return true;
  });
  assert.deepEqual((await entries(reopened.read(5))).map((e) => e.seq), [6, 7, 8], 'reading past the gap works');
}));

test('a stream that would discard commands is refused at open', { skip }, () => withCluster(async (cluster) => {
  const nc = await natsConnection();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ ...commandStreamConfig(cluster, 1), max_age: 3_600_000_000_000 });
  await assert.rejects(openJetStreamJournal({ nc, cluster }), /would drop or not persist commands/);
}));

test('a stream of an older version, on the literal subject, is moved to the wildcard and keeps its log', { skip }, () => withCluster(async (cluster) => {
  const nc = await natsConnection();
  const jsm = await jetstreamManager(nc);
  const names = clusterNames(cluster);
  const oldSubject = `perpx.${cluster}.commands`;
  await jsm.streams.add({ ...commandStreamConfig(cluster, 1), subjects: [oldSubject] });
  const old = await openJetStreamJournal({ nc, cluster });
  assert.deepEqual((await jsm.streams.info(names.commandStream)).config.subjects, [names.commandStreamSubject]);
  for (let i = 1; i <= 3; i++) old.append(i, cmd(i));
  await old.flush();
  assert.deepEqual((await entries(old.read(0))).map((e) => e.seq), [1, 2, 3]);
}));
