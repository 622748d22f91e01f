/**
 * An engine follower through a NATS outage, on a nats-server of the test's own killed with SIGKILL: it keeps
 * what it applied, and once the server is back (same store) it goes on from the next command, gap-free, to
 * the state of a clean replay of the log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openEngineFollower } from '../../src/cluster/follower.js';
import type { Command } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { connectNats, NO_NATS_AUTH } from '../../src/journal/nats-connection.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { verifyJournal } from '../../src/sequencer/recovery.js';
import { silentLogger } from '../journal/helpers.js';
import { skipUnlessNatsServerBinary, untilReconnected, withPrivateNats } from '../journal/private-nats.js';

const cmd = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1 + (i % 3), amount: String(i * 100), transferId: `t${i}` });

test('NATS killed and restarted: the follower resumes from the next command to a clean replay\'s state', { skip: skipUnlessNatsServerBinary(), timeout: 90_000 }, async () => {
  await withPrivateNats(async (nats) => {
    const leaderNc = await connectNats(nats.url, 'perpx leader', NO_NATS_AUTH);
    const gatewayNc = await connectNats(nats.url, 'perpx gateway', NO_NATS_AUTH);
    try {
      const journal = await openJetStreamJournal({ nc: leaderNc, cluster: 'outage', timeoutMs: 1000 });
      for (let seq = 1; seq <= 20; seq++) journal.append(seq, cmd(seq));
      await journal.flush();
      const follower = await openEngineFollower({ nc: gatewayNc, cluster: 'outage', createEngine, restoreEngine, logger: silentLogger });
      await follower.waitFor(20, 10_000);

      await nats.stop('SIGKILL');
      assert.equal(follower.seq, 20, 'what it applied stays');
      await nats.start();
      const after = await untilReconnected(() => openJetStreamJournal({ nc: leaderNc, cluster: 'outage', timeoutMs: 1000 }));
      assert.equal(after.lastSeq(), 20);
      for (let seq = 21; seq <= 40; seq++) after.append(seq, cmd(seq));
      await after.flush();

      await follower.waitFor(40, 60_000);
      assert.equal(follower.state, 'following');
      const replay = await verifyJournal({ journal: after, createEngine, expected: { seq: 40, stateHash: follower.engine.stateHash() } });
      assert.ok(replay.ok, `follower ${replay.expectedHash}, clean replay ${replay.replayedHash}`);
      await follower.close();
    } finally {
      await gatewayNc.close();
      await leaderNc.close();
    }
  });
});
