/**
 * A small deterministic stand-in for the engine, so the journal and sequencer can be tested without it.
 * It keeps a hash chain over every command (any reordering, loss or duplicate changes the hash), a
 * balance per user, and the transfer ids it has seen (a repeated id is refused, exercising the refusal
 * path). `throwOn` lets a test simulate an engine bug.
 */
import { createHash } from 'node:crypto';
import type { EngineSnapshot, ExchangeEngine } from '../../src/engine/api.js';
import type { Command } from '../../src/engine/commands.js';
import type {
  AvailableBalanceView, CommandResult, EngineEvent, MatcherView, TransferView,
} from '../../src/engine/records.js';

interface FakeState {
  seq: number;
  chain: string;
  lastTs: number;
  balances: Record<string, string>;
  /** transferId → [userId, amount, ts] */
  transfers: Record<string, [number, string, number]>;
}

export class FakeEngine implements ExchangeEngine {
  private state: FakeState;
  /** Test hook: apply throws for this transferId. */
  throwOn: string | undefined;

  constructor(state?: FakeState) {
    this.state = state ?? { seq: 0, chain: '', lastTs: 0, balances: {}, transfers: {} };
  }

  get seq(): number {
    return this.state.seq;
  }

  apply(cmd: Command): CommandResult {
    if (cmd.kind === 'funds.deposit' && cmd.transferId === this.throwOn) throw new Error('simulated engine bug');
    const s = this.state;
    s.seq++;
    s.chain = createHash('sha256').update(s.chain).update(JSON.stringify(cmd)).digest('hex');
    s.lastTs = cmd.ts;
    if (cmd.kind === 'funds.deposit') {
      if (s.transfers[cmd.transferId]) {
        return { reply: { ok: false, error: { status: 409, code: 'DUPLICATE', message: 'transfer exists' } }, events: [] };
      }
      const key = String(cmd.userId);
      const balance = BigInt(s.balances[key] ?? '0') + BigInt(cmd.amount);
      s.balances[key] = balance.toString();
      s.transfers[cmd.transferId] = [cmd.userId, cmd.amount, cmd.ts];
      const transfer = this.transfer(cmd.transferId)!;
      const events: EngineEvent[] = [
        { type: 'transfer', transfer },
        { type: 'funding', funding: { userId: cmd.userId, coin: 'usdt', quantity: BigInt(cmd.amount), balance, reason: 'deposit', updatedAt: cmd.ts } },
      ];
      return { reply: { ok: true, transfer }, events };
    }
    return { reply: { ok: true }, events: [] };
  }

  snapshot(): EngineSnapshot {
    return { version: 1, seq: this.state.seq, state: JSON.parse(JSON.stringify(this.state)) as FakeState };
  }

  stateHash(): string {
    const s = this.state;
    const canonical = JSON.stringify([
      s.seq, s.chain, s.lastTs,
      Object.entries(s.balances).sort(([a], [b]) => a.localeCompare(b)),
      Object.entries(s.transfers).sort(([a], [b]) => a.localeCompare(b)),
    ]);
    return createHash('sha256').update(canonical).digest('hex');
  }

  checkInvariants(): void {
    let total = 0n;
    for (const [, amount] of Object.values(this.state.transfers)) total += BigInt(amount);
    let balances = 0n;
    for (const b of Object.values(this.state.balances)) balances += BigInt(b);
    if (total !== balances) throw new Error(`money not conserved: ${total} deposited, ${balances} held`);
  }

  transfer(transferId: string): TransferView | undefined {
    const t = this.state.transfers[transferId];
    if (!t) return undefined;
    return {
      id: transferId, userId: t[0], type: 'deposit', coin: 'usdt', amount: BigInt(t[1]), fee: 0n, status: 'done',
      createdAt: t[2], updatedAt: t[2],
    };
  }

  account(userId: number): AvailableBalanceView {
    const balance = BigInt(this.state.balances[String(userId)] ?? '0');
    return {
      userId, balance, pendingWithdrawals: 0n, positions: [], openOrders: [], negativeUnrealizedPnL: 0n,
      totalLock: 0n, availableBalance: balance, marginCall: false, updatedAt: this.state.lastTs,
    };
  }

  // Queries the journal tests never need.
  instrumentConfigs() { return []; }
  instrumentConfig() { return undefined; }
  instrumentState() { return undefined; }
  matcher(): MatcherView { return { state: 'active', updatedAt: 0 }; }
  getOrder() { return undefined; }
  hasTransfer(transferId: string): boolean { return this.state.transfers[transferId] !== undefined; }
  hasOrderId(): boolean { return false; }
  openOrders() { return []; }
  positions() { return []; }
  tpsls() { return []; }
  depth() { return undefined; }
  power() { return undefined; }
}

export function createFakeEngine(): FakeEngine {
  return new FakeEngine();
}

export function restoreFakeEngine(snapshot: EngineSnapshot): FakeEngine {
  return new FakeEngine(JSON.parse(JSON.stringify(snapshot.state)) as FakeState);
}
