/**
 * What every cluster role needs of the configuration: shared state in PostgreSQL (auth, read model) and the
 * command log, snapshots and real-time broker on NATS JetStream. A role refuses to start on a single-process
 * setting rather than quietly keep state of its own that the other processes cannot see.
 */
import { ConfigError, type ExchangeConfig } from '../config.js';

export type ClusterRole = 'engine' | 'gateway' | 'projector';

export const CLUSTER_ROLES: readonly ClusterRole[] = ['engine', 'gateway', 'projector'];

/** The settings a role implies (JOURNAL, REALTIME_BROKER, AUTH_STORE), checked for what it cannot imply. */
export function clusterConfig(config: ExchangeConfig, role: ClusterRole): ExchangeConfig {
  if (config.readStoreUrl === '') throw new ConfigError(`perpx ${role} needs READ_STORE_URL (the history read model in PostgreSQL, shared by the cluster)`);
  if (role !== 'projector' && config.authDatabaseUrl === '') throw new ConfigError(`perpx ${role} needs AUTH_DATABASE_URL (users, sessions and keys in PostgreSQL, shared by the cluster)`);
  return { ...config, journal: 'jetstream', realtimeBroker: 'nats', authStore: 'postgres' };
}
