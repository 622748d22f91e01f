/**
 * Funds: deposits credit the balance at once; a withdrawal holds its amount (pending) until the chain
 * settles it (done: paid out; error: released) and may be held by an operator meanwhile.
 */
import type { Money } from '../domain/fixed.js';
import { COIN, type CommandContext } from './command-context.js';
import type { TransferView } from './records.js';
import { fail, validUser, type Draft } from './refusal.js';
import { SIGNED_KINDS, signatureRefusal, spendSignature } from './spent-signatures.js';
import type { Stages } from './stages.js';
import type { TransferState } from './state.js';

function parseAmount(amount: string): Money | null {
  if (typeof amount !== 'string' || !/^[0-9]{1,30}$/.test(amount)) return null;
  const v = BigInt(amount);
  return v > 0n ? v : null;
}

/**
 * The most an account may hold after a deposit: 10^8 USDT. Every amount then fits the read model's 64-bit
 * integers with room for sums; a larger credit is refused rather than breaking the projection.
 */
export const MAX_DEPOSITED_BALANCE: Money = 10n ** 16n;

export class Funds {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  deposit(userId: number, amountText: string, transferId: string): Draft {
    const ctx = this.ctx;
    const s = ctx.s;
    const amount = parseAmount(amountText);
    if (!validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (amount === null) return fail(400, 'INVALID_AMOUNT', 'Amount must be a positive integer count of 1e-8');
    if (typeof transferId !== 'string' || transferId.length === 0 || s.transferIds.has(transferId)) {
      return fail(409, 'DUPLICATE_TRANSFER', 'Transfer id already used');
    }
    const held = s.accounts.get(userId)?.balance ?? 0n;
    if (held + amount > MAX_DEPOSITED_BALANCE) {
      return fail(422, 'DEPOSIT_LIMIT', `A deposit may not bring a balance above ${MAX_DEPOSITED_BALANCE / 100_000_000n} USDT`);
    }
    const acc = ctx.accountOf(userId);
    acc.balance += amount;
    s.totals.deposits += amount;
    s.transferIds.add(transferId);
    const transfer: TransferView = { id: transferId, userId, type: 'deposit', coin: COIN, amount, fee: 0n, status: 'done', createdAt: ctx.ts, updatedAt: ctx.ts };
    ctx.events.push({ type: 'transfer', transfer });
    ctx.fundingChange(acc, amount, 'deposit');
    ctx.riskCandidates.add(acc); // more collateral may end a margin call
    return { ok: true, transfer };
  }

  withdraw(userId: number, amountText: string, transferId: string, recipient: string | undefined, digest: string | undefined): Draft {
    const ctx = this.ctx;
    const s = ctx.s;
    const amount = parseAmount(amountText);
    if (!validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (amount === null) return fail(400, 'INVALID_AMOUNT', 'Amount must be positive');
    const used = signatureRefusal(s.spent, userId, SIGNED_KINDS.withdraw, digest);
    if (used) return { ok: false, error: used };
    if (typeof transferId !== 'string' || transferId.length === 0 || s.transferIds.has(transferId)) {
      return fail(409, 'DUPLICATE_TRANSFER', 'Transfer id already used');
    }
    const acc = s.accounts.get(userId);
    if (!acc || this.stages.risk.available(acc) < amount) return fail(422, 'INSUFFICIENT_BALANCE', 'Insufficient available balance');
    acc.pendingWithdrawals += amount;
    s.transferIds.add(transferId);
    const transfer: TransferState = { id: transferId, userId, type: 'withdraw', coin: COIN, amount, fee: 0n, status: 'pending', createdAt: ctx.ts, updatedAt: ctx.ts };
    if (typeof recipient === 'string') transfer.recipient = recipient;
    s.transfers.set(transferId, transfer);
    spendSignature(s.spent, userId, SIGNED_KINDS.withdraw, digest);
    ctx.events.push({ type: 'transfer', transfer: { ...transfer } });
    return { ok: true, transfer: { ...transfer } };
  }

  settleWithdrawal(transferId: string, success: boolean): Draft {
    const ctx = this.ctx;
    const s = ctx.s;
    const t = s.transfers.get(transferId);
    if (!t) return fail(404, 'TRANSFER_NOT_FOUND', 'No pending withdrawal with this id');
    if (t.status === 'blocked') return fail(409, 'TRANSFER_BLOCKED', 'The withdrawal is held by an operator');
    const acc = ctx.accountOf(t.userId);
    acc.pendingWithdrawals -= t.amount;
    t.status = success ? 'done' : 'error';
    t.updatedAt = ctx.nextTime(t.updatedAt);
    s.transfers.delete(transferId);
    if (success) {
      acc.balance -= t.amount;
      s.totals.withdrawals += t.amount;
      ctx.fundingChange(acc, -t.amount, 'withdraw');
    }
    ctx.riskCandidates.add(acc);
    ctx.events.push({ type: 'transfer', transfer: { ...t } });
    return { ok: true, transfer: { ...t } };
  }

  /** The funds stay locked while held; only the status (and updatedAt) changes. */
  holdWithdrawal(transferId: string, hold: boolean): Draft {
    const t = this.ctx.s.transfers.get(transferId);
    if (!t) return fail(404, 'TRANSFER_NOT_FOUND', 'No pending withdrawal with this id');
    const status = hold ? 'blocked' : 'pending';
    if (t.status === status) return fail(409, 'TRANSFER_STATUS', `The withdrawal is already ${status}`);
    t.status = status;
    t.updatedAt = this.ctx.nextTime(t.updatedAt);
    this.ctx.events.push({ type: 'transfer', transfer: { ...t } });
    return { ok: true, transfer: { ...t } };
  }
}
