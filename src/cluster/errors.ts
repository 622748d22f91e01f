/** Errors of the cluster's command path, mapped by the gateway to HTTP statuses (src/api/errors.ts). */

/** A follower did not reach a seq in time (it lags, or the log stopped growing). */
export class FollowerTimeoutError extends Error {
  override name = 'FollowerTimeoutError';
}

/**
 * No engine leader took the command (none subscribed, or none answered in time): a temporary condition, 503.
 * `outcome` says whether the command may still have been applied (a timeout after it was sent) or surely not.
 */
export class LeaderUnavailableError extends Error {
  override name = 'LeaderUnavailableError';
  constructor(message: string, readonly outcome: 'not-applied' | 'unknown', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The leader received the command but could not take it (stopping, journal failed, malformed request). */
export class LeaderRefusedError extends Error {
  override name = 'LeaderRefusedError';
  constructor(message: string, readonly code: string) {
    super(message);
  }
}
