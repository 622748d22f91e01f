/**
 * Chaos: the engine leader is SIGKILLed while bots trade with signed orders through both gateways, then
 * started again. Meanwhile the gateways refuse commands with 503 LEADER_UNAVAILABLE (never a 500) and keep
 * serving reads; afterwards every acknowledged command is in the log and the engine, the leader's state equals a
 * clean replay of the log, and the projector's history equals a clean rebuild. SLOW=1 kills it five times.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { http } from '../../app/client.js';
import { skipUnlessNatsServerBinary } from '../../journal/private-nats.js';
import { skipUnless } from '../../services.js';
import { until, withChaosCluster, type ChaosCluster, type Phases } from './chaos-cluster.js';
import { startSignedLoad, tally } from './signed-load.js';
import { assertNothingLost } from './verify.js';

const skip = skipUnlessNatsServerBinary() || (await skipUnless('postgres'));
const KILLS = process.env.SLOW ? 5 : 1;

describe('chaos: engine leader killed under signed load', { skip, timeout: KILLS * 60_000 + 90_000 }, () => {
  test(`SIGKILL and restart ${KILLS}×: 503 while down, reads served, nothing acknowledged lost`, async () => {
    await withChaosCluster({}, killEngineUnderLoad);
  });
});

async function killEngineUnderLoad(chaos: ChaosCluster, phases: Phases): Promise<void> {
  const load = await startSignedLoad(chaos.gatewayUrls());
  phases.mark('bots signed in');
  try {
    for (let k = 0; k < KILLS; k++) {
      const before = load.ackCount();
      await until('acknowledged commands under load', async () => load.ackCount(), (n) => n >= before + 30, 30_000);
      phases.mark('load');
      await chaos.local.engine.kill('SIGKILL');
      const downAt = Date.now();
      // Both gateways refuse commands for want of a leader…
      for (const g of [0, 1]) {
        await until(`a 503 LEADER_UNAVAILABLE from gateway ${g + 1}`, async () => load.outcomes.filter((o) => o.at > downAt && o.gateway === g),
          (os) => os.some((o) => o.status === 503 && o.code === 'LEADER_UNAVAILABLE'), 20_000);
      }
      // …and still serve live state and history.
      for (const [g, url] of chaos.gatewayUrls().entries()) {
        const bot = load.bots[load.outcomes.find((o) => o.gateway === g)!.bot];
        const auth = { authorization: `Bearer ${bot.accessToken}` };
        assert.equal((await http(url, 'GET', '/api/order/opened', undefined, auth)).status, 200, 'open orders while the engine is down');
        assert.equal((await http(url, 'GET', '/api/order?limit=5', undefined, auth)).status, 200, 'history while the engine is down');
        assert.equal((await http(url, 'GET', '/api/market/instrument')).status, 200, 'market data while the engine is down');
      }
      phases.mark('engine down');
      await chaos.local.restart(chaos.local.engine);
      const upAt = Date.now();
      phases.mark('engine restart');
      const during = load.outcomes.filter((o) => o.sentAt > downAt && o.at < upAt);
      assert.ok(during.every((o) => o.status === 503 && o.code === 'LEADER_UNAVAILABLE'), `commands while the engine was down: ${JSON.stringify(tally(during))}`);
      await until('acknowledged commands after the restart', async () => load.acked('place').filter((o) => o.at > upAt).length, (n) => n >= 20, 30_000);
      phases.mark('load after restart');
    }
  } finally {
    await load.stop();
  }
  const log = await assertNothingLost(chaos, load);
  phases.mark('checks');
  console.log(`engine kills: ${KILLS}; answers ${JSON.stringify(tally(load.outcomes))}; log seq ${log.seq}`);
}
