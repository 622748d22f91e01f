/**
 * What each cluster role may publish and subscribe to on NATS, as data, and the nats-server `authorization`
 * block that enforces it (scripts/cluster/nats-permissions.ts writes it; docs/cluster.md, "NATS credentials
 * and permissions"). Allow-lists only: whatever a role's code paths do not need is refused by the server.
 *
 * - engine (the leader): appends to the command stream; creates and reads its streams and the snapshot object
 *   store; answers command and admin requests; publishes real-time channels and session revocations. Not even
 *   the leader may delete or purge the command stream, or delete single messages from it: that is an operator's
 *   job, as a user of its own. (Nor can a push consumer copy messages into the log: clusterNames says why.)
 * - gateway: sends command and admin requests; reads the command log (follower), the snapshots, the real-time
 *   history, the leader lease and the engine status board; publishes and hears session revocations. It may not publish on the command stream's subject nor
 *   call any JetStream API that changes a stream.
 * - projector: reads the command log and the snapshots (follower), nothing else.
 *
 * Replies: every role subscribes to `_INBOX.>` (JetStream API answers, pull deliveries, request answers); none may
 * publish there, except the engine answering a request (`allow_responses`: only to a request it received).
 * The subjects were worked out against nats-server 2.9 and the @nats-io/jetstream 3 client
 * (test/cluster/nats-permissions.test.ts runs every role's code as its user on a server with this block).
 */
import { clusterNames } from '../journal/jetstream-names.js';

export type NatsRole = 'engine' | 'gateway' | 'projector';

export const NATS_ROLES: readonly NatsRole[] = ['engine', 'gateway', 'projector'];

export interface RolePermissions {
  publish: string[];
  subscribe: string[];
  /** May answer requests it received (publish once to their reply subject). */
  allowResponses: boolean;
}

/** How a role's user proves itself: a password (plain, or a bcrypt hash starting with `$2`), or an nkey. */
export type NatsUserCredential = { user: string; password: string } | { nkey: string };

/**
 * What a reader of `stream` needs: stream info and message gets, and consumers of its own, ordered and unacked
 * (no `$JS.ACK`): pull ones fetch with MSG.NEXT; push ones (the object store's reads) answer the server's flow
 * control on `$JS.FC` (without it a multi-megabyte snapshot read stalls). Deleting consumers only where the code
 * does (`deletesConsumers`): otherwise one role could cut off another's readers.
 */
function readStream(stream: string, deletesConsumers = false): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
    `$JS.FC.${stream}.>`,
    ...(deletesConsumers ? [`$JS.API.CONSUMER.DELETE.${stream}.*`] : []),
  ];
}

export function rolePermissions(cluster: string, role: NatsRole): RolePermissions {
  const names = clusterNames(cluster);
  const { realtimeStream, snapshotStream, revocationSubject: revocations, realtimeSubjectPrefix: realtime } = names;
  // Each call on its per-epoch subjects (issue 30: only the current leader answers).
  const admin = (['snapshot', 'checkpoint', 'stats'] as const).map((c) => names.adminSubject(c, '*'));
  // `$JS.API.INFO`: the client's JetStream check when it opens a manager.
  const followLog = ['$JS.API.INFO', ...readStream(names.commandStream), ...readStream(snapshotStream)];
  switch (role) {
    case 'engine':
      return {
        publish: [
          names.commandSubject,
          `${realtime}.>`,
          revocations,
          `$O.${names.snapshotBucket}.>`,
          ...followLog,
          ...readStream(realtimeStream, true),
          ...[names.commandStream, realtimeStream, snapshotStream, names.leaseStream, names.enginesStream].map((s) => `$JS.API.STREAM.CREATE.${s}`),
          // The leader lease: create, renew (compare-and-set) and release its one key.
          `$KV.${names.leaseBucket}.>`,
          ...readStream(names.leaseStream),
          // The engine status board: its own entry, and its predecessor's at a takeover (engine-status.ts).
          `$KV.${names.enginesBucket}.>`,
          ...readStream(names.enginesStream),
          // Payout records (issue 30): claim a withdrawal before sending it to the chain, record the result.
          `$JS.API.STREAM.CREATE.${names.payoutStream}`,
          `$KV.${names.payoutBucket}.>`,
          ...readStream(names.payoutStream),
          // The simulated chain shared by the engines: a new leader looks up what the old one broadcast.
          `$JS.API.STREAM.CREATE.${names.simchainStream}`,
          `$KV.${names.simchainBucket}.>`,
          ...readStream(names.simchainStream),
          // The broker raises its stream's limits to the history size; object store deletes purge one object's chunks.
          `$JS.API.STREAM.UPDATE.${realtimeStream}`,
          `$JS.API.STREAM.PURGE.${snapshotStream}`,
        ],
        subscribe: ['_INBOX.>', names.submitSubject, `${names.submitSubject}.*`, ...admin, revocations, `${realtime}.>`],
        allowResponses: true,
      };
    case 'gateway':
      return {
        publish: [names.submitSubject, `${names.submitSubject}.*`, ...admin, revocations, ...followLog, ...readStream(realtimeStream, true), ...readStream(names.leaseStream, true), ...readStream(names.enginesStream, true)],
        subscribe: ['_INBOX.>', revocations, `${realtime}.>`],
        allowResponses: false,
      };
    case 'projector':
      return { publish: followLog, subscribe: ['_INBOX.>'], allowResponses: false };
  }
}

const quote = (s: string) => JSON.stringify(s);
const list = (items: string[], indent: string) => `[\n${items.map((i) => `${indent}  ${quote(i)}`).join(',\n')}\n${indent}]`;

/** The nats-server `authorization { users = [...] }` block for one cluster, one user per role. */
export function authorizationBlock(cluster: string, users: Record<NatsRole, NatsUserCredential>): string {
  const entries = NATS_ROLES.map((role) => {
    const p = rolePermissions(cluster, role);
    const who = 'nkey' in users[role]
      ? `nkey: ${quote(users[role].nkey)}`
      : `user: ${quote(users[role].user)}, password: ${quote(users[role].password)}`;
    const responses = p.allowResponses ? '\n        allow_responses: true' : '';
    return `    # ${role}\n    {\n      ${who}\n      permissions: {\n        publish: { allow: ${list(p.publish, '        ')} }\n`
      + `        subscribe: { allow: ${list(p.subscribe, '        ')} }${responses}\n      }\n    }`;
  });
  return `authorization {\n  users = [\n${entries.join(',\n')}\n  ]\n}\n`;
}

/** The role's user name on a server shared by several clusters: `<cluster>-<role>`. */
export const roleUserName = (cluster: string, role: NatsRole): string => `${cluster}-${role}`;

/**
 * The same permissions for a server in operator (JWT) mode, whose users log in with NATS_CREDS: `nsc` commands
 * that add each role's user to `account`; `nsc generate creds` then writes its .creds file.
 */
export function nscUserCommands(cluster: string, account: string): string {
  const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return NATS_ROLES.map((role) => {
    const p = rolePermissions(cluster, role);
    const flags = [
      `--allow-pub ${sh(p.publish.join(','))}`,
      `--allow-sub ${sh(p.subscribe.join(','))}`,
      ...(p.allowResponses ? ['--allow-pub-response 1'] : []),
    ];
    return `nsc add user --account ${sh(account)} --name ${sh(roleUserName(cluster, role))} \\\n  ${flags.join(' \\\n  ')}\n`
      + `nsc generate creds --account ${sh(account)} --name ${sh(roleUserName(cluster, role))} > ${sh(`${roleUserName(cluster, role)}.creds`)}`;
  }).join('\n\n') + '\n';
}
