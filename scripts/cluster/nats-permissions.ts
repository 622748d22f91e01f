/**
 * Writes the nats-server `authorization` block that gives each cluster role its own user and permissions
 * (src/cluster/nats-permissions.ts; docs/cluster.md, "NATS credentials and permissions"):
 *
 *   npx tsx scripts/cluster/nats-permissions.ts [--cluster perpx] [--out nats-auth.conf]   # users with passwords
 *   npx tsx scripts/cluster/nats-permissions.ts --nsc ACCOUNT [--cluster perpx]            # nsc commands (creds)
 *
 * Each role's user: PERPX_NATS_<ROLE>_NKEY (an nkey public key, U…: the role logs in with NATS_CREDS, a .creds
 * file holding its seed) or PERPX_NATS_<ROLE>_PASSWORD (ROLE = ENGINE, GATEWAY, PROJECTOR; a bcrypt hash, `$2a$…`,
 * is written as is); with neither a password is generated, and the NATS_USER / NATS_PASSWORD the role starts with
 * are printed on stderr. The block goes to `--out` (created owner-only) or stdout; include it
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
    const nkey = process.env[`PERPX_NATS_${role.toUpperCase()}_NKEY`];
    if (nkey) {
      if (!/^U[A-Z2-7]{55}$/.test(nkey)) {
        console.error(`PERPX_NATS_${role.toUpperCase()}_NKEY must be a user nkey public key (U followed by 55 base32 characters)`);
        process.exit(2);
      }
      users[role] = { nkey };
      continue;
    }
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
