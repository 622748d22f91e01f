/** Deprecated API keys: key format and validation of the create/update bodies. */
import { opaqueToken } from './secrets.js';
import { AuthError, SCOPES, isScope, type ApiKeyRecord, type Scope } from './types.js';
import type { ApiKeyRow } from './ports.js';

/** Visible part kept for display ("perpx_Ab3d…"); the rest is secret. */
const KEY_PREFIX = 'perpx_';
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;
export const DEFAULT_API_KEY_NAME = 'API key';
/** What a key may do when its creator names no scopes (the public client names none): trade, not withdraw. */
export const DEFAULT_API_KEY_SCOPES: readonly Scope[] = Object.freeze(['read', 'trade']);
const MAX_NAME_LENGTH = 100;

export function generateApiKey(): { key: string; prefix: string } {
  const key = KEY_PREFIX + opaqueToken();
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function parseApiKeyName(name: unknown): string {
  if (typeof name !== 'string') throw new AuthError(400, 'invalid_name', 'name must be a string');
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_NAME_LENGTH) {
    throw new AuthError(400, 'invalid_name', `name must be 1 to ${MAX_NAME_LENGTH} characters`);
  }
  return trimmed;
}

/** ISO 8601 date → ms; null clears the expiry. Must lie in the future. */
export function parseApiKeyExpiry(value: unknown, now: number): number | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw new AuthError(400, 'invalid_expires_at', 'expiresAt must be an ISO 8601 date or null');
  const t = Date.parse(value);
  if (!Number.isFinite(t)) throw new AuthError(400, 'invalid_expires_at', 'expiresAt must be an ISO 8601 date or null');
  if (t <= now) throw new AuthError(400, 'invalid_expires_at', 'expiresAt must be in the future');
  return t;
}

/** A non-empty list of known scopes (duplicates dropped, vocabulary order); absent → the default. */
export function parseApiKeyScopes(value: unknown): Scope[] {
  if (value === undefined) return [...DEFAULT_API_KEY_SCOPES];
  const bad = () => new AuthError(400, 'invalid_scopes', `scopes must be a non-empty array of ${SCOPES.join(', ')}`);
  if (!Array.isArray(value) || value.length === 0 || value.length > 16) throw bad();
  for (const s of value) if (!isScope(s)) throw bad();
  return SCOPES.filter((s) => value.includes(s));
}

/** A credential with scopes `caller` may only manage keys that can do no more than it can. */
export function assertWithinScopes(scopes: readonly Scope[], caller: readonly Scope[] | undefined): void {
  if (caller === undefined) return;
  const missing = scopes.filter((s) => !caller.includes(s));
  if (missing.length > 0) {
    throw new AuthError(403, 'INSUFFICIENT_SCOPE', `This credential cannot manage a key with the scopes it lacks: ${missing.join(', ')}`);
  }
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    expiresAt: row.expiresAt,
    deletedAt: row.deletedAt,
    scopes: [...row.scopes],
  };
}
