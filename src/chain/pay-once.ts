/**
 * Sends a withdrawal to the chain at most once across leaders (issue 30): claim the transfer id in the shared
 * payout ledger under this leader's epoch, check the lease right before sending, record the result after.
 * A transfer claimed by another leader is never sent blindly: its recorded result is used, or the chain is
 * asked (`lookupWithdrawal`); only a claim of an older epoch that the chain never saw after `claimTimeoutMs`
 * is taken over (compare-and-set) and sent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PayoutLedger, PayoutRecord } from './payout-ledger.js';
import type { ChainNetwork, WithdrawalOutcome, WithdrawalRequest } from './ports.js';

export interface PayoutGuard {
  ledger: PayoutLedger;
  /** The lease epoch this leader holds. */
  epoch: number;
  /** Whether this process still holds the lease (asked right before each send). */
  stillLeading(): Promise<boolean>;
  /** How long a claim of an older epoch without result stays the other's, ms. */
  claimTimeoutMs: number;
  /** How often a claim of another leader is looked at again, ms. */
  pollMs: number;
}

/** The final outcome, or undefined when this process must not settle it (deposed or stopped). */
export async function payOnce(w: WithdrawalRequest, network: ChainNetwork, g: PayoutGuard, stopped: () => boolean): Promise<WithdrawalOutcome | undefined> {
  if (!(await g.stillLeading())) return undefined;
  const claim = await g.ledger.claim(w.transferId, g.epoch);
  if (claim === true) return sendClaimed(w, network, g);
  return awaitOther(w, network, g, claim, stopped);
}

async function sendClaimed(w: WithdrawalRequest, network: ChainNetwork, g: PayoutGuard): Promise<WithdrawalOutcome | undefined> {
  // Fencing: a leader deposed between claim and send (stalled, SIGSTOPped) leaves the claim to the next one.
  if (!(await g.stillLeading())) return undefined;
  const mine = await g.ledger.get(w.transferId);
  if (!mine || mine.epoch !== g.epoch || mine.outcome) return mine?.outcome;
  const outcome = await network.sendWithdrawal(w);
  await g.ledger.recordOutcome(w.transferId, outcome);
  return outcome;
}

async function awaitOther(w: WithdrawalRequest, network: ChainNetwork, g: PayoutGuard, first: PayoutRecord, stopped: () => boolean): Promise<WithdrawalOutcome | undefined> {
  let record: PayoutRecord | undefined = first;
  while (!stopped()) {
    if (record?.outcome) return record.outcome;
    const onChain = await network.lookupWithdrawal(w.transferId);
    if (onChain && onChain !== 'pending') {
      await g.ledger.recordOutcome(w.transferId, onChain);
      return onChain;
    }
    const stale = record && record.epoch < g.epoch && Date.now() - record.claimedAt >= g.claimTimeoutMs;
    if (record && stale && onChain === undefined && await g.ledger.takeOver(w.transferId, record, g.epoch)) return sendClaimed(w, network, g);
    if (record && record.epoch === g.epoch && onChain === undefined) return sendClaimed(w, network, g);
    await sleep(g.pollMs);
    record = await g.ledger.get(w.transferId);
  }
  return undefined;
}
