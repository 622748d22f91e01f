/**
 * ProfileStore on PostgreSQL (AUTH_STORE=postgres): the profile columns of `auth_users`, whose table PgAuthStore
 * creates. Every gateway reads and writes the same rows.
 */
import type pg from 'pg';
import { inTransaction } from '../store/pg-transaction.js';
import { likeLiteral, patchEntries, PUBLIC_COLUMNS, toggledFavorites, toPublic, type ProfilePatch, type ProfileStore, type PublicUser, type PublicUserRow, type UserSearch } from './profiles.js';

export class PgProfileStore implements ProfileStore {
  /** `onUserChanged`: as in the SQLite adapter, keeps this process's auth user cache fresh. */
  constructor(private readonly pool: pg.Pool, private readonly onUserChanged: (userId: string) => void = () => {}) {}

  async updateProfile(userId: string, patch: ProfilePatch, now: number): Promise<boolean> {
    const entries = patchEntries(patch);
    const sets = [...entries.map(([c], i) => `${c} = $${i + 1}`), `updated_at = $${entries.length + 1}`];
    const r = await this.pool.query(`UPDATE auth_users SET ${sets.join(', ')} WHERE id = $${entries.length + 2}`, [...entries.map(([, v]) => v), now, userId]);
    const changed = r.rowCount === 1;
    if (changed) this.onUserChanged(userId);
    return changed;
  }

  async setFavorite(userId: string, instrument: string, favorite: boolean, now: number): Promise<string[] | undefined> {
    const { next, changed } = await inTransaction(this.pool, async (c) => {
      // FOR UPDATE: two gateways toggling favourites of one user at once must not lose either change.
      const row = (await c.query<{ favorite_instruments: string }>('SELECT favorite_instruments FROM auth_users WHERE id = $1 FOR UPDATE', [userId])).rows[0];
      if (!row) return { next: undefined, changed: false };
      const current = JSON.parse(row.favorite_instruments) as string[];
      const toggled = toggledFavorites(current, instrument, favorite);
      const differs = toggled.length !== current.length;
      if (differs) await c.query('UPDATE auth_users SET favorite_instruments = $1, updated_at = $2 WHERE id = $3', [JSON.stringify(toggled), now, userId]);
      return { next: toggled, changed: differs };
    });
    if (changed) this.onUserChanged(userId);
    return next;
  }

  async findByAuthId(authId: string): Promise<(PublicUser & { exchangeId: number }) | undefined> {
    const r = (await this.pool.query<PublicUserRow>(`SELECT ${PUBLIC_COLUMNS} FROM auth_users WHERE auth_id = $1`, [authId])).rows[0];
    return r && { ...toPublic(r), exchangeId: Number(r.exchange_id) };
  }

  async isRegisteredWallet(wallet: string): Promise<boolean> {
    return (await this.pool.query('SELECT 1 FROM auth_users WHERE wallet_lower = $1', [wallet.toLowerCase()])).rowCount! > 0;
  }

  async isKnownSmartAccount(address: string): Promise<boolean> {
    return (await this.pool.query('SELECT 1 FROM auth_users WHERE lower(smart_account_address) = $1 LIMIT 1', [address.toLowerCase()])).rowCount! > 0;
  }

  async userCount(): Promise<number> {
    return Number((await this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM auth_users')).rows[0]!.n);
  }

  async signUpTimes(from: number, to: number): Promise<number[]> {
    const r = await this.pool.query<{ created_at: string }>('SELECT created_at FROM auth_users WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at', [from, to]);
    return r.rows.map((x) => Number(x.created_at));
  }

  async search(q: UserSearch): Promise<{ list: PublicUser[]; count: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.authId !== undefined) {
      params.push(q.authId);
      where.push(`auth_id = $${params.length}`);
    }
    if (q.search !== undefined) {
      const text = likeLiteral(q.search.toLowerCase());
      params.push(`%${text}%`, `${text}%`);
      where.push(`(lower(coalesce(name, '')) LIKE $${params.length - 1} ESCAPE '\\' OR wallet_lower LIKE $${params.length} ESCAPE '\\')`);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const [list, count] = await Promise.all([
      this.pool.query<PublicUserRow>(`SELECT ${PUBLIC_COLUMNS} FROM auth_users ${filter} ORDER BY exchange_id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [...params, q.limit, q.offset]),
      this.pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM auth_users ${filter}`, params),
    ]);
    return { list: list.rows.map(toPublic), count: Number(count.rows[0]!.n) };
  }
}
