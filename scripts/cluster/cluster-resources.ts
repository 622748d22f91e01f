/**
 * What a cluster keeps outside its processes, by name: the JetStream streams of one CLUSTER_NAME (command log,
 * real-time history, snapshot bucket) and its two PostgreSQL databases. `npm run cluster --fresh` deletes them
 * to start over; the tests delete theirs after a run.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { clusterNames } from '../../src/journal/jetstream-names.js';

/** The streams a cluster creates: the command log, the real-time history, the snapshots, the lease and engine board. */
export function clusterStreams(cluster: string): string[] {
  const names = clusterNames(cluster);
  return [names.commandStream, names.realtimeStream, names.snapshotStream, names.leaseStream, names.enginesStream, names.payoutStream, names.simchainStream];
}

/** Deletes the cluster's streams (those that exist); returns the names deleted. */
export async function deleteClusterStreams(natsUrl: string, cluster: string): Promise<string[]> {
  const nc = await connect({ servers: natsUrl.split(',') });
  try {
    const jsm = await jetstreamManager(nc);
    const deleted: string[] = [];
    for (const stream of clusterStreams(cluster)) {
      if (await jsm.streams.delete(stream).catch(() => false)) deleted.push(stream);
    }
    return deleted;
  } finally {
    await nc.close();
  }
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function checkDatabaseName(database: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`database name must be lower-case letters, digits and _: ${database}`);
}

async function withAdmin<T>(adminUrl: string, run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  checkDatabaseName(database);
  await withAdmin(adminUrl, async (c) => {
    const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await c.query(`CREATE DATABASE ${database}`);
  });
}

/** Drops the database if it exists, ending the sessions still on it (the cluster's processes are stopped first). */
export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  checkDatabaseName(database);
  await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
}
