/**
 * Chaos: the cluster's nats-server (command log, command requests, real-time broker) is SIGKILLed while bots
 * trade through both gateways, and started again on the same store. The cluster pauses (commands 503 or
 * slow, never a 500), resumes by itself once NATS is back with no role restarted, and loses nothing
 * acknowledged. SLOW=1 kills it five times.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { skipUnlessNatsServerBinary } from '../../journal/private-nats.js';
import { skipUnless } from '../../services.js';
import { until, withChaosCluster, type ChaosCluster, type Phases } from './chaos-cluster.js';
import { startSignedLoad, tally } from './signed-load.js';
import { assertNothingLost } from './verify.js';

// Outside `npm test`'s default set (CI's 20 minutes): CHAOS=1 kills once, SLOW=1 five times (docs/cluster-failures.md).
const skip = (process.env.CHAOS || process.env.SLOW ? false : 'CHAOS=1 or SLOW=1') || skipUnlessNatsServerBinary() || (await skipUnless('postgres'));
const KILLS = process.env.SLOW ? 5 : 1;
/** How long NATS stays down: longer than one journal append's ack wait (5 s). */
const DOWN_MS = 6000;

describe('chaos: NATS killed under signed load', { skip, timeout: KILLS * 60_000 + 90_000 }, () => {
  test(`SIGKILL and restart of nats-server ${KILLS}×: the cluster pauses, resumes by itself, loses nothing acknowledged`, async () => {
    await withChaosCluster({}, killNatsUnderLoad);
  });
});

async function killNatsUnderLoad(chaos: ChaosCluster, phases: Phases): Promise<void> {
  const roles = [chaos.local.engine, chaos.local.projector, ...chaos.local.gateways];
  const load = await startSignedLoad(chaos.gatewayUrls());
  phases.mark('bots signed in');
  try {
    for (let k = 0; k < KILLS; k++) {
      const before = load.ackCount();
      await until('acknowledged commands under load', async () => load.ackCount(), (n) => n >= before + 30, 30_000);
      phases.mark('load');
      await chaos.nats.stop('SIGKILL');
      await new Promise((r) => setTimeout(r, DOWN_MS));
      await chaos.nats.start();
      const upAt = Date.now();
      phases.mark('nats down');
      await until('acknowledged orders once NATS is back', async () => load.acked('place').filter((o) => o.at > upAt).length, (n) => n >= 20, 60_000)
        .catch((err: Error) => {
          const roleState = roles.map((r) => `${r.name} ${r.running ? 'running' : 'exited'}:\n${r.output.slice(-1500)}`).join('\n');
          throw new Error(`${err.message}\nanswers since: ${JSON.stringify(tally(load.outcomes.filter((o) => o.at > upAt)))}\n${roleState}`);
        });
      phases.mark('resumed');
    }
  } finally {
    await load.stop();
  }
  const exited = roles.filter((r) => !r.running).map((r) => `${r.name}: ${r.output.slice(-2000)}`);
  assert.deepEqual(exited, [], 'no role exited or was restarted');
  const log = await assertNothingLost(chaos, load);
  phases.mark('checks');
  console.log(`nats kills: ${KILLS}; answers ${JSON.stringify(tally(load.outcomes))}; log seq ${log.seq}`);
}
