/**
 * The JetStream journal when NATS goes away: on a nats-server of the test's own, killed with SIGKILL after
 * some groups were acknowledged. A flush while it is down fails (ack timeout) and the journal fails stop;
 * after NATS restarts on the same store, a reopened journal holds every acknowledged command, gap-free, and
 * the unacknowledged group is either wholly there or absent (the client may deliver it after reconnecting:
 * its expected-last-sequence still holds, so it lands only where it was meant to).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from '../../src/engine/commands.js';
import { connectNats, NO_NATS_AUTH } from '../../src/journal/nats-connection.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { JournalWriteError } from '../../src/journal/ports.js';
import { entries } from './journal-contract.js';
import { freePort, PrivateNats, skipUnlessNatsServerBinary, untilReconnected } from './private-nats.js';

const cmd = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1 + (i % 3), amount: String(i), transferId: `t${i}` });

test('NATS killed and restarted, retries off: the flush in between fails stop; every acknowledged command is kept, gap-free', { skip: skipUnlessNatsServerBinary(), timeout: 60_000 }, async (t) => {
  const storeDir = mkdtempSync(join(tmpdir(), 'perpx-nats-'));
  const nats = new PrivateNats(await freePort(), storeDir);
  try {
    await nats.start();
    const nc = await connectNats(nats.url, 'perpx outage test', NO_NATS_AUTH);
    try {
      const journal = await openJetStreamJournal({ nc, cluster: 'outage', timeoutMs: 1000, retryForMs: 0 });
      let seq = 0;
      for (let g = 0; g < 10; g++) {
        for (let k = 0; k < 5; k++) journal.append(++seq, cmd(seq));
        await journal.flush();
      }
      const acknowledged = journal.durableSeq();
      assert.equal(acknowledged, 50);

      await nats.stop('SIGKILL');
      for (let k = 0; k < 5; k++) journal.append(++seq, cmd(seq));
      await assert.rejects(journal.flush(), JournalWriteError, 'no ack while NATS is down');
      assert.throws(() => journal.append(seq + 1, cmd(seq + 1)), JournalWriteError, 'fail-stop');
      assert.equal(journal.durableSeq(), acknowledged);

      await nats.start();
      const reopened = await untilReconnected(() => openJetStreamJournal({ nc, cluster: 'outage' }));
      const kept = await entries(reopened.read(0));
      assert.ok(reopened.lastSeq() === 50 || reopened.lastSeq() === 55, `tail ${reopened.lastSeq()}`);
      t.diagnostic(`unacknowledged group ${reopened.lastSeq() === 55 ? 'delivered after the reconnect' : 'lost with the connection'}`);
      assert.deepEqual(kept.map((e) => e.seq), Array.from({ length: reopened.lastSeq() }, (_, k) => k + 1), 'gap-free');
      assert.deepEqual(kept.map((e) => e.command), kept.map((e) => cmd(e.seq)), 'each command as appended');
      // The restarted log takes the next writer's groups.
      reopened.append(reopened.lastSeq() + 1, cmd(reopened.lastSeq() + 1));
      await reopened.flush();
      await reopened.close();
    } finally {
      await nc.close();
    }
  } finally {
    await nats.stop('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
  }
});

test('NATS killed and restarted: a flush in between is retried and lands once; the journal goes on', { skip: skipUnlessNatsServerBinary(), timeout: 60_000 }, async () => {
  const storeDir = mkdtempSync(join(tmpdir(), 'perpx-nats-'));
  const nats = new PrivateNats(await freePort(), storeDir);
  try {
    await nats.start();
    const nc = await connectNats(nats.url, 'perpx outage retry test', NO_NATS_AUTH);
    try {
      const journal = await openJetStreamJournal({ nc, cluster: 'retry', timeoutMs: 1000 });
      let seq = 0;
      for (let g = 0; g < 5; g++) {
        for (let k = 0; k < 5; k++) journal.append(++seq, cmd(seq));
        await journal.flush();
      }
      await nats.stop('SIGKILL');
      // Two flushes pipelined while NATS is down: both wait, neither fails.
      for (let k = 0; k < 5; k++) journal.append(++seq, cmd(seq));
      const first = journal.flush();
      for (let k = 0; k < 5; k++) journal.append(++seq, cmd(seq));
      const second = journal.flush();
      await new Promise((r) => setTimeout(r, 2500)); // past the 1 s ack wait: the appends are being retried
      await nats.start();
      await Promise.all([first, second]);
      assert.equal(journal.durableSeq(), 35);
      journal.append(++seq, cmd(seq));
      await journal.flush();
      const kept = await entries(journal.read(0));
      assert.deepEqual(kept.map((e) => e.seq), Array.from({ length: 36 }, (_, k) => k + 1), 'each command once, gap-free');
      assert.deepEqual(kept.map((e) => e.command), kept.map((e) => cmd(e.seq)), 'each command as appended');
      await journal.close();
    } finally {
      await nc.close();
    }
  } finally {
    await nats.stop('SIGKILL');
    rmSync(storeDir, { recursive: true, force: true });
  }
});
