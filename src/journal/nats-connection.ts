/**
 * One way every process connects to NATS: with the credentials the configuration names (NATS_CREDS,
 * NATS_USER + NATS_PASSWORD, or NATS_TOKEN), so a server that enforces the role permissions
 * (src/cluster/nats-permissions.ts) knows which role each connection is. Plain data: it crosses to worker threads.
 */
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';

export type NatsAuth =
  | { kind: 'none' }
  /** A .creds file (user JWT + nkey seed), the NATS standard; read again on every reconnect, so a rotated file applies. */
  | { kind: 'creds'; file: string }
  | { kind: 'password'; user: string; password: string }
  | { kind: 'token'; token: string };

export const NO_NATS_AUTH: NatsAuth = { kind: 'none' };

/** The client options that present `auth` to the server. */
export function natsAuthOptions(auth: NatsAuth): Partial<ConnectionOptions> {
  switch (auth.kind) {
    case 'none': return {};
    case 'creds': return { authenticator: credsAuthenticator(() => readFileSync(auth.file)) };
    case 'password': return { user: auth.user, pass: auth.password };
    case 'token': return { token: auth.token };
  }
}

/** For log lines and error messages: which credentials, never the secret. */
export function describeNatsAuth(auth: NatsAuth): string {
  switch (auth.kind) {
    case 'none': return 'no credentials';
    case 'creds': return `credentials file ${auth.file}`;
    case 'password': return `user ${auth.user}`;
    case 'token': return 'a token';
  }
}

/** Connects for one process role; reconnects for as long as it runs (appends in the meantime time out). */
export function connectNats(url: string, name: string, auth: NatsAuth): Promise<NatsConnection> {
  // No async traces: with them every request and JetStream publish builds two Error objects up front for
  // their stack, ~67 µs of the engine leader's ~160 µs of main-thread CPU per order (docs/performance.md, "Cluster").
  return connect({ servers: url, name, maxReconnectAttempts: -1, noAsyncTraces: true, ...natsAuthOptions(auth) });
}
