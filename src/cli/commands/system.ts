/** status and snapshot. */
import { parseMoney } from '../../domain/fixed.js';
import { adminClient } from '../admin-client.js';
import type { CommandSpec } from '../command.js';
import { printResult, table } from '../output.js';

interface Status {
  seq: number;
  matcher: string;
  uptimeSec: number;
  sequencer: string;
  lastSnapshotSeq: number;
  commandsByKind: Record<string, number>;
  realtime: { connections: number; subscriptions: number };
  ledger: Record<string, string>;
  readModel?: { projectedSeq: number; state: string; error?: string };
  marketMakers: number;
  instruments: Array<Record<string, string | null>>;
}

/**
 * The money identity from the status's ledger terms alone:
 * balances + fees + reserveFund − openCost = deposits − withdrawals (exact, in 1e-8 units).
 */
export function moneyIdentity(ledger: Record<string, string>): { left: bigint; right: bigint; holds: boolean } {
  const term = (k: string) => parseMoney(ledger[k] ?? '0');
  const left = term('balances') + term('fees') + term('reserveFund') - term('openCost');
  const right = term('deposits') - term('withdrawals');
  return { left, right, holds: left === right };
}

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: 'Engine seq, matcher and sequencer state, instruments with prices, connections, ledger',
  async run({ global }) {
    const s = await (await adminClient(global)).get<Status>('/api/admin/status');
    printResult(global.json, s, () => {
      const commands = Object.entries(s.commandsByKind).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}=${n}`).join(' ');
      return [
        `seq ${s.seq}  matcher ${s.matcher}  sequencer ${s.sequencer}  last snapshot ${s.lastSnapshotSeq}  up ${s.uptimeSec}s`,
        `realtime: ${s.realtime.connections} connections, ${s.realtime.subscriptions} subscriptions   market makers: ${s.marketMakers}`,
        `ledger: ${Object.entries(s.ledger).map(([k, v]) => `${k} ${v}`).join(', ')}`,
        `money identity (balances + fees + reserveFund − openCost = deposits − withdrawals): ${moneyIdentity(s.ledger).holds ? 'holds' : 'VIOLATED'}`,
        ...(s.readModel ? [`read model: seq ${s.readModel.projectedSeq}, ${s.readModel.state}${s.readModel.error ? ` (${s.readModel.error})` : ''}`] : []),
        `commands since start: ${commands || '(none)'}`,
        '',
        table(['instrument', 'trading', 'index', 'mark', 'last', 'bid', 'ask', 'OI'],
          s.instruments.map((i) => [i.id, i.trading, i.indexPrice, i.markPrice, i.lastPrice, i.bestBid, i.bestAsk, i.openInterest])),
      ].join('\n');
    });
  },
};

export const snapshotCommand: CommandSpec = {
  name: 'snapshot',
  summary: 'Take an engine snapshot now (next start loads it instead of replaying the journal)',
  async run({ global }) {
    const r = await (await adminClient(global)).post<{ seq: number }>('/api/admin/snapshot');
    printResult(global.json, r, () => `snapshot saved at seq ${r.seq}`);
  },
};
