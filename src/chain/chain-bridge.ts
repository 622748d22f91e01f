/**
 * Moves money between the engine and a ChainNetwork, only ever through journaled commands:
 * - a withdrawal the engine accepted (transfer event, pending) is sent to the chain; its final outcome
 *   becomes `funds.withdraw.settle` (done, or error = the locked funds return);
 * - an operator hold (`funds.withdraw.hold`) makes the engine refuse the settle; the outcome is parked
 *   and applied when the hold is released;
 * - deposits the chain reports become `funds.deposit` with the tx hash as transfer id (a repeat is
 *   refused by the engine, so a deposit reported twice credits once).
 * After a restart, `start()` resends every unsettled withdrawal (the network is idempotent per id). In a
 * cluster, `payouts` makes that hold across leaders: a payout ledger shared by the engines (pay-once.ts).
 */
import type pino from 'pino';
import type { ExchangeEngine } from '../engine/api.js';
import type { CommandResult, EngineEvent, TransferView } from '../engine/records.js';
import type { CommandInput } from '../engine/commands.js';
import { payOnce, type PayoutGuard } from './pay-once.js';
import type { ChainDeposit, ChainNetwork } from './ports.js';

export interface ChainBridgeOptions {
  network: ChainNetwork;
  engine: Pick<ExchangeEngine, 'transfer' | 'pendingTransfers'>;
  submit: (cmd: CommandInput) => Promise<CommandResult>;
  logger: pino.Logger;
  /** Cluster: send each withdrawal once across takeovers (absent: send directly, one process). */
  payouts?: PayoutGuard;
}

export class ChainBridge {
  /** Withdrawals sent and not yet settled. */
  private readonly inFlight = new Set<string>();
  /** Final outcomes the engine refused to apply because the transfer is held. */
  private readonly parked = new Map<string, boolean>();
  private readonly work = new Set<Promise<void>>();
  private unwatch: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly o: ChainBridgeOptions) {}

  start(): void {
    this.unwatch = this.o.network.watchDeposits((d) => this.track(this.credit(d)));
    for (const t of this.o.engine.pendingTransfers?.() ?? []) this.consider(t);
  }

  /** Event-bus subscriber. */
  readonly onBatch = (batch: { events: readonly EngineEvent[] }): void => {
    for (const e of batch.events) if (e.type === 'transfer') this.consider(e.transfer);
  };

  /** Operator: hold or release a pending withdrawal. */
  async hold(transferId: string, hold: boolean): Promise<CommandResult> {
    return this.o.submit({ kind: 'funds.withdraw.hold', transferId, hold });
  }

  /** Operator: credit a deposit directly (no chain involved); the id makes retries safe. */
  async operatorDeposit(userId: number, amount: bigint, transferId: string): Promise<CommandResult> {
    return this.o.submit({ kind: 'funds.deposit', userId, amount: amount.toString(), transferId });
  }

  /** Resolves when no chain call or command of the bridge is under way (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    this.o.network.close();
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err) => this.o.logger.error({ err }, 'chain bridge step failed')).finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  private consider(t: TransferView): void {
    if (this.stopped || t.type !== 'withdraw') return;
    if (t.status === 'pending' && this.parked.has(t.id)) {
      const confirmed = this.parked.get(t.id)!;
      this.parked.delete(t.id);
      this.track(this.settle(t.id, confirmed));
    } else if ((t.status === 'pending' || t.status === 'blocked') && !this.inFlight.has(t.id) && !this.parked.has(t.id)) {
      this.inFlight.add(t.id);
      this.track(this.send(t));
    }
  }

  private async send(t: TransferView): Promise<void> {
    const request = { transferId: t.id, userId: t.userId, recipient: t.recipient, amount: t.amount };
    const outcome = this.o.payouts
      ? await payOnce(request, this.o.network, this.o.payouts, () => this.stopped)
      : await this.o.network.sendWithdrawal(request);
    if (this.stopped || !outcome) return;
    this.o.logger.info({ transferId: t.id, txHash: outcome.txHash, confirmed: outcome.confirmed, reason: outcome.reason }, 'withdrawal final on chain');
    await this.settle(t.id, outcome.confirmed);
  }

  private async settle(transferId: string, confirmed: boolean): Promise<void> {
    const r = await this.o.submit({ kind: 'funds.withdraw.settle', transferId, success: confirmed });
    if (r.reply.ok || r.reply.error.code !== 'TRANSFER_BLOCKED') {
      this.inFlight.delete(transferId);
      if (!r.reply.ok) this.o.logger.warn({ transferId, error: r.reply.error }, 'withdrawal settle refused');
      return;
    }
    // Held: park the outcome; if the hold was released meanwhile, apply it now.
    this.parked.set(transferId, confirmed);
    this.inFlight.delete(transferId);
    const now = this.o.engine.transfer(transferId);
    if (now?.status === 'pending') this.consider(now);
  }

  private async credit(d: ChainDeposit): Promise<void> {
    if (this.stopped) return;
    const r = await this.o.submit({ kind: 'funds.deposit', userId: d.userId, amount: d.amount.toString(), transferId: d.txHash });
    if (!r.reply.ok && r.reply.error.code !== 'DUPLICATE_TRANSFER') this.o.logger.warn({ txHash: d.txHash, error: r.reply.error }, 'chain deposit refused');
  }
}
