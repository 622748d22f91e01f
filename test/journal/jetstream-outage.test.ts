/**
 * The JetStream journal when NATS goes away: on a nats-server of the test's own, killed with SIGKILL after
 * some groups were acknowledged. A flush while it is down fails (ack timeout) and the journal fails stop;
 * after NATS restarts on the same store, a reopened journal holds every acknowledged command, gap-free, and
 * the unacknowledged group is either wholly there or absent (the client may deliver it after reconnecting:
 * its expected-last-sequence still holds, so it lands only where it was meant to).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from '../../src/engine/commands.js';
import { connectNats, NO_NATS_AUTH } from '../../src/journal/nats-connection.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { JournalWriteError } from '../../src/journal/ports.js';
import { entries } from './journal-contract.js';
import { skipUnlessNatsServerBinary, untilReconnected, withPrivateNats } from './private-nats.js';

const cmd = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1 + (i % 3), amount: String(i), transferId: `t${i}` });

test('NATS killed and restarted: the flush in between fails stop; every acknowledged command is kept, gap-free', { skip: skipUnlessNatsServerBinary(), timeout: 60_000 }, async (t) => {
  await withPrivateNats(async (nats) => {
    const nc = await connectNats(nats.url, 'perpx outage test', NO_NATS_AUTH);
    try {
      const journal = await openJetStreamJournal({ nc, cluster: 'outage', timeoutMs: 1000 });
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
  });
});
