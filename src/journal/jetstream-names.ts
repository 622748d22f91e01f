/** Names of one cluster's JetStream resources and subjects, derived from its name so two clusters on one NATS never meet. */

export interface ClusterNames {
  /** Stream holding the command log. */
  commandStream: string;
  /** The subject the leader appends on: only its user may publish here. */
  commandSubject: string;
  /**
   * The stream's subjects: a wildcard over `commandSubject`, never that literal subject itself. nats-server (2.9, as
   * the open nats-io/nats-server#8274 says of later ones) lets any user allowed to create a consumer point a push
   * consumer's deliver subject anywhere, and delivers there once a subscription on that literal subject exists: a
   * stream on the literal subject is such a subscription, so another stream's messages could be appended to the
   * log by a gateway. A wildcard stream subscription does not count (test/cluster/nats-permissions.test.ts).
   */
  commandStreamSubject: string;
  /** Core NATS request subject: gateways send commands here, the engine leader answers (outside the stream). */
  submitSubject: string;
  /** Object store bucket of the engine snapshots. */
  snapshotBucket: string;
  /** KV bucket of the engine leader lease (src/cluster/leader-lease.ts) and the stream behind it. */
  leaseBucket: string;
  leaseStream: string;
  /** KV bucket where each engine process publishes its status (src/cluster/engine-status.ts), and its stream. */
  enginesBucket: string;
  enginesStream: string;
  /** Payout records per withdrawal, shared by the engines (KV bucket and its stream). */
  payoutBucket: string;
  payoutStream: string;
  /** The simulated chain's ledger of broadcast withdrawals, shared by the engine processes (KV bucket, stream). */
  simchainBucket: string;
  simchainStream: string;
  /** The request subject of the leader holding lease epoch `epoch` (under `submitSubject`). */
  leaderSubmitSubject: (epoch: number) => string;
  /** The stream behind that bucket (`OBJ_<bucket>`, the object store's naming), on subjects `$O.<bucket>.>`. */
  snapshotStream: string;
  /** Stream of the real-time channel histories (src/realtime/nats-broker.ts). */
  realtimeStream: string;
  /** Subject prefix of the real-time channels: `<prefix>.h.<channel>` in the stream, `<prefix>.l.<channel>` core only. */
  realtimeSubjectPrefix: string;
  /** Core NATS subject of session revocations, heard by every gateway. */
  revocationSubject: string;
  /**
   * Core NATS request subject of an operator's engine call (snapshot, checkpoint, stats), answered only by the
   * leader of that lease epoch; `'*'` is the pattern the permissions grant.
   */
  adminSubject: (call: 'snapshot' | 'checkpoint' | 'stats', epoch: number | '*') => string;
}

/** Stream and bucket names allow letters, digits, `_` and `-` only. */
const CLUSTER_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

export const isClusterName = (name: string): boolean => CLUSTER_NAME_RE.test(name);

export function clusterNames(cluster: string): ClusterNames {
  if (!isClusterName(cluster)) throw new Error(`cluster name must be 1-64 letters, digits, _ or -, got "${cluster}"`);
  return {
    commandStream: `PERPX_${cluster}_COMMANDS`,
    commandSubject: `perpx.${cluster}.log.append`,
    commandStreamSubject: `perpx.${cluster}.log.*`,
    submitSubject: `perpx.${cluster}.commands.submit`,
    snapshotBucket: `perpx-${cluster}-snapshots`,
    leaseBucket: `perpx-${cluster}-leader`,
    leaseStream: `KV_perpx-${cluster}-leader`,
    enginesBucket: `perpx-${cluster}-engines`,
    enginesStream: `KV_perpx-${cluster}-engines`,
    payoutBucket: `perpx-${cluster}-payouts`,
    payoutStream: `KV_perpx-${cluster}-payouts`,
    simchainBucket: `perpx-${cluster}-simchain`,
    simchainStream: `KV_perpx-${cluster}-simchain`,
    leaderSubmitSubject: (epoch) => `perpx.${cluster}.commands.submit.${epoch}`,
    snapshotStream: `OBJ_perpx-${cluster}-snapshots`,
    realtimeStream: `PERPX_${cluster}_REALTIME`,
    realtimeSubjectPrefix: `perpx.${cluster}.rt`,
    revocationSubject: `perpx.${cluster}.sessions.revoked`,
    adminSubject: (call, epoch) => `perpx.${cluster}.admin.${call}.${epoch}`,
  };
}
