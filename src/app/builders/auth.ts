/**
 * Sign-in and credentials: the auth database (users, sessions, API keys, and the account tables beside them),
 * the auth service, and the operator CLI's token.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type pino from 'pino';
import { openAccountStores, type AccountStores } from '../../accounts/index.js';
import { createAuthService, InProcessSessionEvents } from '../../auth/index.js';
import { loadOrCreateOperatorToken } from '../../auth/operator-token.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export type ExchangeAuth = Awaited<ReturnType<typeof createAuthService>>;

export interface AuthParts {
  auth: ExchangeAuth;
  /** Profiles, trade signals, mobile-app rules, OAuth (tables in auth.db). */
  accountStores: AccountStores;
  /** Secret for `x-operator-token` (DATA_DIR/operator-token). */
  operatorToken: string;
}

export async function buildAuth(
  config: Pick<ExchangeConfig, 'chainId' | 'accessTokenTtlSec' | 'refreshTokenTtlSec' | 'refreshGraceSec' | 'nonceLimits' | 'siweDomains'>,
  dataDir: string,
  log: pino.Logger,
): Promise<Built<AuthParts>> {
  const db = new Database(join(dataDir, 'auth.db'));
  const closeDb = { close: () => void db.close() };
  const service = await closingOnFailure(closeDb, async () => {
    db.pragma('journal_mode = WAL');
    const auth = await createAuthService({
      db,
      dataDir,
      chainId: config.chainId,
      accessTokenTtlSec: config.accessTokenTtlSec,
      refreshTokenTtlSec: config.refreshTokenTtlSec,
      refreshGraceSec: config.refreshGraceSec,
      sessionEvents: new InProcessSessionEvents((err) => log.warn({ err }, 'a session revocation listener failed')),
      nonceLimits: config.nonceLimits,
      allowedDomains: config.siweDomains,
    });
    const accountStores = openAccountStores(db, (userId) => auth.forgetUser(userId));
    return { auth, accountStores, operatorToken: await loadOrCreateOperatorToken(dataDir) };
  });
  return { service, stop: () => closeDb.close() };
}
