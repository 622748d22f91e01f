/**
 * Writes the nats-server `authorization` block that gives each cluster role its own user and permissions
 * (src/cluster/nats-permissions.ts; docs/operations.md, "NATS credentials and permissions"):
 *
 *   npx tsx scripts/cluster/nats-permissions.ts [--cluster perpx] [--out nats-auth.conf]   # users with passwords
 *   npx tsx scripts/cluster/nats-permissions.ts --nsc ACCOUNT [--cluster perpx]            # nsc commands (creds)
 *
 * Passwords come from PERPX_NATS_ENGINE_PASSWORD, PERPX_NATS_GATEWAY_PASSWORD and PERPX_NATS_PROJECTOR_PASSWORD
 * (a bcrypt hash, `$2a$…`, is written as is); a missing one is generated, and the NATS_USER / NATS_PASSWORD each
 * role starts with are printed on stderr. The block goes to `--out` (created owner-only) or stdout; include it
 * from the server's config (`include nats-auth.conf`).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { authorizationBlock, NATS_ROLES, nscUserCommands, roleUserName, type NatsRole, type NatsUserCredential } from '../../src/cluster/nats-permissions.js';
import { isClusterName } from '../../src/journal/jetstream-names.js';

const { values } = parseArgs({
  options: { cluster: { type: 'string', default: 'perpx' }, out: { type: 'string' }, nsc: { type: 'string' } },
  strict: true,
});
const cluster = values.cluster!;
if (!isClusterName(cluster)) {
  console.error(`--cluster must be 1-64 letters, digits, _ or - (as CLUSTER_NAME), got "${cluster}"`);
  process.exit(2);
}

let output: string;
if (values.nsc !== undefined) {
  output = nscUserCommands(cluster, values.nsc);
} else {
  const users = {} as Record<NatsRole, NatsUserCredential>;
  for (const role of NATS_ROLES) {
    const given = process.env[`PERPX_NATS_${role.toUpperCase()}_PASSWORD`];
    const password = given || randomBytes(24).toString('base64url');
    users[role] = { user: roleUserName(cluster, role), password };
    if (!given) console.error(`perpx ${role}: NATS_USER=${roleUserName(cluster, role)} NATS_PASSWORD=${password}`);
  }
  output = `# perpx cluster "${cluster}": one user per role (scripts/cluster/nats-permissions.ts)\n${authorizationBlock(cluster, users)}`;
}
if (values.out) {
  writeFileSync(values.out, output, { mode: 0o600 });
  console.error(`${values.out} written`);
} else {
  process.stdout.write(output);
}
