/**
 * What the exchange needs from a blockchain: pay out withdrawals and report deposits. A real chain
 * watcher implements `ChainNetwork` (send the payout transaction, wait for finality; watch the deposit
 * contract); `SimulatedChain` implements it for development and tests. Amounts are Money (1e-8 USDT).
 */
export interface WithdrawalRequest {
  transferId: string;
  userId: number;
  /** Address to pay; undefined when the request carried none (the simulation accepts it). */
  recipient: string | undefined;
  amount: bigint;
}

export interface WithdrawalOutcome {
  /** true = final on chain (the money left); false = the payout failed and the funds go back. */
  confirmed: boolean;
  txHash: string;
  reason?: string;
}

export interface ChainDeposit {
  /** Unique per deposit on chain; becomes the transfer id, so a deposit reported twice credits once. */
  txHash: string;
  userId: number;
  amount: bigint;
}

export interface ChainNetwork {
  /**
   * Pays a withdrawal out; resolves once the result is final. Must be idempotent per transferId: after a
   * restart the same pending withdrawal is sent again.
   */
  sendWithdrawal(w: WithdrawalRequest): Promise<WithdrawalOutcome>;
  /**
   * The payout of `transferId` as the chain knows it: its final outcome, 'pending' when sent and not final,
   * undefined when never sent. A new leader that finds a withdrawal claimed by another asks here instead of
   * sending again (issue 30).
   */
  lookupWithdrawal(transferId: string): Promise<WithdrawalOutcome | 'pending' | undefined>;
  /** Deposits seen on chain are reported here; returns an unsubscribe function. */
  watchDeposits(onDeposit: (d: ChainDeposit) => void): () => void;
  /** Stops timers/connections; pending sendWithdrawal promises may stay unresolved. */
  close(): void;
}
