/**
 * Blocked mobile-app versions: an operator marks a version range of a platform as blocked (with the
 * message the app shows); an app asks whether its own version is blocked. Adapters: SQLite here (auth.db),
 * PostgreSQL in pg-mobile-app.ts (AUTH_STORE=postgres); the rules themselves are the functions below.
 */
import type { Database, Statement } from 'better-sqlite3';
import { compareSemver, parseSemver } from './semver.js';

export const PLATFORMS = ['android', 'ios', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];
/** "0" = not blocked (rule kept but inactive), "1" = soft block (the app may continue), "2" = hard block. */
export const BLOCK_TYPES = ['0', '1', '2'] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

export interface BlockedVersion {
  id: string;
  platform: Platform;
  /** inclusive bounds; null = unbounded */
  versionMin: string | null;
  versionMax: string | null;
  blockType: BlockType;
  blockMessage: string;
  blockHead: string;
  blockButton: string;
  blockButtonLink: string;
  createdAt: number;
  updatedAt: number;
}

export type BlockedVersionPatch = Partial<Pick<BlockedVersion,
  'platform' | 'versionMin' | 'versionMax' | 'blockType' | 'blockMessage' | 'blockHead' | 'blockButton' | 'blockButtonLink'>>;

export const MOBILE_APP_SCHEMA = `
CREATE TABLE IF NOT EXISTS acct_mobile_blocked_versions (
  id TEXT PRIMARY KEY,
  body TEXT NOT NULL,
  platform TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS acct_mobile_blocked_versions_platform ON acct_mobile_blocked_versions(platform);
`;

export class MobileAppError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/**
 * The rule after applying the patch to the current one (undefined: a new rule). A new rule needs a platform;
 * versions must be semver and versionMin ≤ versionMax. Throws MobileAppError on bad input.
 */
export function patchedRule(id: string, current: BlockedVersion | undefined, patch: BlockedVersionPatch, now: number): BlockedVersion {
  const platform = patch.platform ?? current?.platform;
  if (!platform) throw new MobileAppError('PLATFORM_REQUIRED', 'platform is required when creating a blocked-version rule');
  const next: BlockedVersion = {
    id,
    platform,
    versionMin: patch.versionMin !== undefined ? patch.versionMin : current?.versionMin ?? null,
    versionMax: patch.versionMax !== undefined ? patch.versionMax : current?.versionMax ?? null,
    blockType: patch.blockType ?? current?.blockType ?? '2',
    blockMessage: patch.blockMessage ?? current?.blockMessage ?? '',
    blockHead: patch.blockHead ?? current?.blockHead ?? '',
    blockButton: patch.blockButton ?? current?.blockButton ?? '',
    blockButtonLink: patch.blockButtonLink ?? current?.blockButtonLink ?? '',
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
  const min = next.versionMin === null ? undefined : parseSemver(next.versionMin);
  const max = next.versionMax === null ? undefined : parseSemver(next.versionMax);
  if (next.versionMin !== null && !min) throw new MobileAppError('INVALID_VERSION', `versionMin "${next.versionMin}" is not a semantic version (e.g. 1.4.0)`);
  if (next.versionMax !== null && !max) throw new MobileAppError('INVALID_VERSION', `versionMax "${next.versionMax}" is not a semantic version (e.g. 1.4.0)`);
  if (min && max && compareSemver(min, max) > 0) {
    throw new MobileAppError('INVALID_VERSION_RANGE', `versionMin ${next.versionMin} is above versionMax ${next.versionMax}`);
  }
  return next;
}

/** The active rule (block type 1 or 2) of a platform's rules covering this version, the hardest first. */
export function coveringRule(rules: BlockedVersion[], version: string): BlockedVersion | undefined {
  const v = parseSemver(version);
  if (!v) throw new MobileAppError('INVALID_VERSION', `version "${version}" is not a semantic version (e.g. 1.4.0)`);
  const hits = rules.filter((rule) => rule.blockType !== '0'
    && (rule.versionMin === null || compareSemver(parseSemver(rule.versionMin)!, v) <= 0)
    && (rule.versionMax === null || compareSemver(v, parseSemver(rule.versionMax)!) <= 0));
  hits.sort((a, b) => Number(b.blockType) - Number(a.blockType) || a.id.localeCompare(b.id));
  return hits[0];
}

export interface BlockedVersionStore {
  get(id: string): Promise<BlockedVersion | undefined>;
  list(): Promise<BlockedVersion[]>;
  /** Creates the rule or applies the patch to it (patchedRule); nothing is written when that throws. */
  put(id: string, patch: BlockedVersionPatch, now: number): Promise<BlockedVersion>;
  /** The rule blocking this version (coveringRule); undefined = not blocked. */
  check(platform: Platform, version: string): Promise<BlockedVersion | undefined>;
}

export class SqliteBlockedVersionStore implements BlockedVersionStore {
  private readonly st: {
    get: Statement<[string], { body: string }>;
    upsert: Statement<[string, string, string, number]>;
    byPlatform: Statement<[string], { body: string }>;
    all: Statement<[], { body: string }>;
  };

  constructor(private readonly db: Database) {
    this.st = {
      get: db.prepare('SELECT body FROM acct_mobile_blocked_versions WHERE id = ?'),
      upsert: db.prepare(
        `INSERT INTO acct_mobile_blocked_versions (id, body, platform, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET body = excluded.body, platform = excluded.platform, updated_at = excluded.updated_at`,
      ),
      byPlatform: db.prepare('SELECT body FROM acct_mobile_blocked_versions WHERE platform = ? ORDER BY id'),
      all: db.prepare('SELECT body FROM acct_mobile_blocked_versions ORDER BY platform, id'),
    };
  }

  async get(id: string): Promise<BlockedVersion | undefined> {
    return this.read(id);
  }

  async list(): Promise<BlockedVersion[]> {
    return this.st.all.all().map((r) => JSON.parse(r.body) as BlockedVersion);
  }

  async put(id: string, patch: BlockedVersionPatch, now: number): Promise<BlockedVersion> {
    return this.db.transaction(() => {
      const next = patchedRule(id, this.read(id), patch, now);
      this.st.upsert.run(id, JSON.stringify(next), next.platform, now);
      return next;
    })();
  }

  async check(platform: Platform, version: string): Promise<BlockedVersion | undefined> {
    return coveringRule(this.st.byPlatform.all(platform).map((r) => JSON.parse(r.body) as BlockedVersion), version);
  }

  private read(id: string): BlockedVersion | undefined {
    const r = this.st.get.get(id);
    return r && (JSON.parse(r.body) as BlockedVersion);
  }
}
