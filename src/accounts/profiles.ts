/**
 * Profile data of users: edits of the caller's own profile, favourite instruments, and the public user
 * search. Users live in the auth database (`auth_users`, owned by src/auth); this module only writes the
 * profile columns, never identity (wallet, role, ids).
 */
import type { Database, Statement } from 'better-sqlite3';

export interface ProfilePatch {
  name?: string | null;
  email?: string | null;
  avatar?: string | null;
  locale?: string;
  dateTimeFormat?: string;
  social?: Array<{ type: string; value: string }>;
}

/** What anyone signed in may see of another user. */
export interface PublicUser {
  id: string;
  authId: string;
  name: string | null;
  avatar: string | null;
  level: number;
  wallet: string;
  createdAt: number;
}

export interface UserSearch {
  authId?: string;
  /** at least 3 characters: matches name (substring, case-insensitive) or wallet (prefix) */
  search?: string;
  limit: number;
  offset: number;
}

interface PublicUserRow {
  id: string;
  auth_id: string;
  name: string | null;
  avatar: string | null;
  level: number;
  wallet: string;
  created_at: number;
  exchange_id: number;
}

// Column names come from this fixed map, never from the caller.
const PROFILE_COLUMNS: Record<keyof ProfilePatch, string> = {
  name: 'name',
  email: 'email',
  avatar: 'avatar',
  locale: 'locale',
  dateTimeFormat: 'date_time_format',
  social: 'social',
};

const PUBLIC_COLUMNS = 'id, auth_id, name, avatar, level, wallet, created_at, exchange_id';

/** LIKE pattern matching `text` literally (the search box must not inject wildcards). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function toPublic(r: PublicUserRow): PublicUser {
  return { id: r.id, authId: r.auth_id, name: r.name, avatar: r.avatar, level: r.level, wallet: r.wallet, createdAt: r.created_at };
}

export class ProfileStore {
  private readonly st: {
    favorites: Statement<[string], { favorite_instruments: string }>;
    setFavorites: Statement<[string, number, string]>;
    byAuthId: Statement<[string], PublicUserRow>;
    byWallet: Statement<[string], { id: string }>;
    userCount: Statement<[], { n: number }>;
    createdTimes: Statement<[number, number], { created_at: number }>;
    smartAccounts: Statement<[string], { smart_account_address: string }>;
  };
  private readonly patchStatements = new Map<string, Statement>();

  /**
   * `onUserChanged`: called after a row of `auth_users` changed here, so the auth service's user cache
   * (src/auth) never serves a stale profile.
   */
  constructor(private readonly db: Database, private readonly onUserChanged: (userId: string) => void = () => {}) {
    this.st = {
      favorites: db.prepare('SELECT favorite_instruments FROM auth_users WHERE id = ?'),
      setFavorites: db.prepare('UPDATE auth_users SET favorite_instruments = ?, updated_at = ? WHERE id = ?'),
      byAuthId: db.prepare(`SELECT ${PUBLIC_COLUMNS} FROM auth_users WHERE auth_id = ?`),
      byWallet: db.prepare('SELECT id FROM auth_users WHERE wallet_lower = ?'),
      userCount: db.prepare('SELECT COUNT(*) AS n FROM auth_users'),
      createdTimes: db.prepare('SELECT created_at FROM auth_users WHERE created_at >= ? AND created_at < ? ORDER BY created_at'),
      smartAccounts: db.prepare('SELECT smart_account_address FROM auth_users WHERE lower(smart_account_address) = ?'),
    };
  }

  /** Applies the patch to the user's own row; returns false when the user does not exist. */
  updateProfile(userId: string, patch: ProfilePatch, now: number): boolean {
    const keys = (Object.keys(patch) as Array<keyof ProfilePatch>).filter((k) => k in PROFILE_COLUMNS && patch[k] !== undefined);
    const sets = [...keys.map((k) => `${PROFILE_COLUMNS[k]} = @${k}`), 'updated_at = @now'];
    const sql = `UPDATE auth_users SET ${sets.join(', ')} WHERE id = @userId`;
    let stmt = this.patchStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.patchStatements.set(sql, stmt);
    }
    const values: Record<string, unknown> = { userId, now };
    for (const k of keys) values[k] = k === 'social' ? JSON.stringify(patch.social) : patch[k];
    const changed = stmt.run(values).changes === 1;
    if (changed) this.onUserChanged(userId);
    return changed;
  }

  /** Adds or removes one instrument; returns the new list (undefined when the user does not exist). */
  setFavorite(userId: string, instrument: string, favorite: boolean, now: number): string[] | undefined {
    return this.db.transaction(() => {
      const row = this.st.favorites.get(userId);
      if (!row) return undefined;
      const current = JSON.parse(row.favorite_instruments) as string[];
      const next = favorite
        ? current.includes(instrument) ? current : [...current, instrument]
        : current.filter((i) => i !== instrument);
      if (next.length !== current.length) {
        this.st.setFavorites.run(JSON.stringify(next), now, userId);
        this.onUserChanged(userId);
      }
      return next;
    })();
  }

  /** The user behind a public handle, with the engine id for reading their history. */
  findByAuthId(authId: string): (PublicUser & { exchangeId: number }) | undefined {
    const r = this.st.byAuthId.get(authId);
    return r && { ...toPublic(r), exchangeId: r.exchange_id };
  }

  isRegisteredWallet(wallet: string): boolean {
    return this.st.byWallet.get(wallet.toLowerCase()) !== undefined;
  }

  isKnownSmartAccount(address: string): boolean {
    return this.st.smartAccounts.get(address.toLowerCase()) !== undefined;
  }

  userCount(): number {
    return this.st.userCount.get()!.n;
  }

  /** Sign-up times in [from, to), oldest first (statistics charts). */
  signUpTimes(from: number, to: number): number[] {
    return this.st.createdTimes.all(from, to).map((r) => r.created_at);
  }

  /** Public user search, oldest account first. */
  search(q: UserSearch): { list: PublicUser[]; count: number } {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: q.limit, offset: q.offset };
    if (q.authId !== undefined) {
      where.push('auth_id = @authId');
      params.authId = q.authId;
    }
    if (q.search !== undefined) {
      where.push("(lower(coalesce(name, '')) LIKE @nameLike ESCAPE '\\' OR wallet_lower LIKE @walletLike ESCAPE '\\')");
      const text = likeLiteral(q.search.toLowerCase());
      params.nameLike = `%${text}%`;
      params.walletLike = `${text}%`;
    }
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const list = this.db
      .prepare<[Record<string, unknown>], PublicUserRow>(
        `SELECT ${PUBLIC_COLUMNS} FROM auth_users ${filter} ORDER BY exchange_id LIMIT @limit OFFSET @offset`,
      )
      .all(params)
      .map(toPublic);
    const { limit: _l, offset: _o, ...countParams } = params;
    const count = this.db.prepare<[Record<string, unknown>], { n: number }>(`SELECT COUNT(*) AS n FROM auth_users ${filter}`).get(countParams)!.n;
    return { list, count };
  }
}
