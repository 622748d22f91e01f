/** ProfileStore on the auth.db of one process (SQLite, synchronous underneath). */
import type { Database, Statement } from 'better-sqlite3';
import { likeLiteral, patchEntries, PUBLIC_COLUMNS, toggledFavorites, toPublic, type ProfilePatch, type ProfileStore, type PublicUser, type PublicUserRow, type UserSearch } from './profiles.js';

export class SqliteProfileStore implements ProfileStore {
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

  async updateProfile(userId: string, patch: ProfilePatch, now: number): Promise<boolean> {
    const entries = patchEntries(patch);
    const sql = `UPDATE auth_users SET ${[...entries.map(([c]) => `${c} = ?`), 'updated_at = ?'].join(', ')} WHERE id = ?`;
    let stmt = this.patchStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.patchStatements.set(sql, stmt);
    }
    const changed = stmt.run(...entries.map(([, v]) => v), now, userId).changes === 1;
    if (changed) this.onUserChanged(userId);
    return changed;
  }

  async setFavorite(userId: string, instrument: string, favorite: boolean, now: number): Promise<string[] | undefined> {
    return this.db.transaction(() => {
      const row = this.st.favorites.get(userId);
      if (!row) return undefined;
      const current = JSON.parse(row.favorite_instruments) as string[];
      const next = toggledFavorites(current, instrument, favorite);
      if (next.length !== current.length) {
        this.st.setFavorites.run(JSON.stringify(next), now, userId);
        this.onUserChanged(userId);
      }
      return next;
    })();
  }

  async findByAuthId(authId: string): Promise<(PublicUser & { exchangeId: number }) | undefined> {
    const r = this.st.byAuthId.get(authId);
    return r && { ...toPublic(r), exchangeId: Number(r.exchange_id) };
  }

  async isRegisteredWallet(wallet: string): Promise<boolean> {
    return this.st.byWallet.get(wallet.toLowerCase()) !== undefined;
  }

  async isKnownSmartAccount(address: string): Promise<boolean> {
    return this.st.smartAccounts.get(address.toLowerCase()) !== undefined;
  }

  async userCount(): Promise<number> {
    return this.st.userCount.get()!.n;
  }

  async signUpTimes(from: number, to: number): Promise<number[]> {
    return this.st.createdTimes.all(from, to).map((r) => r.created_at);
  }

  async search(q: UserSearch): Promise<{ list: PublicUser[]; count: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.authId !== undefined) {
      where.push('auth_id = ?');
      params.push(q.authId);
    }
    if (q.search !== undefined) {
      where.push("(lower(coalesce(name, '')) LIKE ? ESCAPE '\\' OR wallet_lower LIKE ? ESCAPE '\\')");
      const text = likeLiteral(q.search.toLowerCase());
      params.push(`%${text}%`, `${text}%`);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const list = this.db
      .prepare<unknown[], PublicUserRow>(`SELECT ${PUBLIC_COLUMNS} FROM auth_users ${filter} ORDER BY exchange_id LIMIT ? OFFSET ?`)
      .all(...params, q.limit, q.offset)
      .map(toPublic);
    const count = this.db.prepare<unknown[], { n: number }>(`SELECT COUNT(*) AS n FROM auth_users ${filter}`).get(...params)!.n;
    return { list, count };
  }
}
