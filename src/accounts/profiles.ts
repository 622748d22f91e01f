/**
 * Profile data of users: edits of the caller's own profile, favourite instruments, and the public user
 * search. Users live in the auth database (`auth_users`, owned by src/auth); the stores only write the
 * profile columns, never identity (wallet, role, ids). Adapters: sqlite-profiles.ts (one process, auth.db)
 * and pg-profiles.ts (every gateway of a cluster, AUTH_STORE=postgres).
 */

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

/** A row of the public columns (PostgreSQL hands back int8 as strings). */
export interface PublicUserRow {
  id: string;
  auth_id: string;
  name: string | null;
  avatar: string | null;
  level: number;
  wallet: string;
  created_at: number | string;
  exchange_id: number | string;
}

// Column names come from this fixed map, never from the caller.
export const PROFILE_COLUMNS: Record<keyof ProfilePatch, string> = {
  name: 'name',
  email: 'email',
  avatar: 'avatar',
  locale: 'locale',
  dateTimeFormat: 'date_time_format',
  social: 'social',
};

export const PUBLIC_COLUMNS = 'id, auth_id, name, avatar, level, wallet, created_at, exchange_id';

/** LIKE pattern matching `text` literally (the search box must not inject wildcards). */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function toPublic(r: PublicUserRow): PublicUser {
  return { id: r.id, authId: r.auth_id, name: r.name, avatar: r.avatar, level: r.level, wallet: r.wallet, createdAt: Number(r.created_at) };
}

/** The patched profile columns, in a fixed order (column names from PROFILE_COLUMNS, never from the caller). */
export function patchEntries(patch: ProfilePatch): Array<[column: string, value: unknown]> {
  const keys = (Object.keys(patch) as Array<keyof ProfilePatch>).filter((k) => k in PROFILE_COLUMNS && patch[k] !== undefined);
  return keys.map((k) => [PROFILE_COLUMNS[k], k === 'social' ? JSON.stringify(patch.social) : patch[k]]);
}

/** The favourites after adding or removing one instrument (same list when nothing changes). */
export function toggledFavorites(current: string[], instrument: string, favorite: boolean): string[] {
  if (favorite) return current.includes(instrument) ? current : [...current, instrument];
  return current.filter((i) => i !== instrument);
}

export interface ProfileStore {
  /** Applies the patch to the user's own row; false when the user does not exist. */
  updateProfile(userId: string, patch: ProfilePatch, now: number): Promise<boolean>;
  /** Adds or removes one instrument; the new list (undefined when the user does not exist). */
  setFavorite(userId: string, instrument: string, favorite: boolean, now: number): Promise<string[] | undefined>;
  /** The user behind a public handle, with the engine id for reading their history. */
  findByAuthId(authId: string): Promise<(PublicUser & { exchangeId: number }) | undefined>;
  isRegisteredWallet(wallet: string): Promise<boolean>;
  isKnownSmartAccount(address: string): Promise<boolean>;
  userCount(): Promise<number>;
  /** Sign-up times in [from, to), oldest first (statistics charts). */
  signUpTimes(from: number, to: number): Promise<number[]>;
  /** Public user search, oldest account first. */
  search(q: UserSearch): Promise<{ list: PublicUser[]; count: number }>;
}
