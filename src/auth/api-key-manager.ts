/**
 * Deprecated API keys: management (create, list, update, delete, regenerate) and the lookup behind
 * `x-api-key`. A key seen recently is answered from memory so an API-key request needs no database read;
 * changes made here evict it at once, changes made elsewhere (another process) show within API_KEY_TTL_MS.
 */
import { randomUUID } from 'node:crypto';
import {
  DEFAULT_API_KEY_NAME,
  assertWithinScopes,
  generateApiKey,
  parseApiKeyExpiry,
  parseApiKeyName,
  parseApiKeyScopes,
  toApiKeyRecord,
} from './api-keys.js';
import { BoundedCache } from './bounded-cache.js';
import { sha256Hex } from './secrets.js';
import type { ApiKeyPatch, ApiKeyRow, AuthStore } from './ports.js';
import { AuthError, type ApiKeyBody, type ApiKeyRecord, type Scope } from './types.js';

const API_KEYS_MAX = 50_000;
const API_KEY_TTL_MS = 10_000;

export class ApiKeyManager {
  // Only keys found in the store are cached: a flood of made-up keys must not evict the real ones.
  private readonly byHash = new BoundedCache<string, ApiKeyRow>(API_KEYS_MAX);
  // Bumped by every change: a lookup that overlapped one does not cache what it read (it may predate it).
  private changes = 0;

  constructor(
    private readonly store: AuthStore,
    private readonly now: () => number,
  ) {}

  /** The live key row for `key` from memory: null when known dead, undefined when not in memory. */
  liveNow(key: string, now: number): ApiKeyRow | null | undefined {
    const row = this.byHash.get(sha256Hex(key), now);
    return row && (isLive(row, now) ? row : null);
  }

  /** The live key row for `key`, from the store when not in memory; null for an unknown, deleted or expired key. */
  async live(key: string): Promise<ApiKeyRow | null> {
    const hash = sha256Hex(key);
    let row = this.byHash.get(hash, this.now());
    if (!row) {
      const changesBefore = this.changes;
      row = await this.store.findApiKeyByHash(hash);
      if (!row) return null;
      if (this.changes === changesBefore) this.byHash.set(hash, row, this.now() + API_KEY_TTL_MS);
    }
    return isLive(row, this.now()) ? row : null;
  }

  async create(userId: string, body: ApiKeyBody): Promise<{ apiKey: ApiKeyRecord; key: string }> {
    const now = this.now();
    const name = body?.name === undefined ? DEFAULT_API_KEY_NAME : parseApiKeyName(body.name);
    const expiresAt = body?.expiresAt === undefined ? null : parseApiKeyExpiry(body.expiresAt, now);
    const scopes = parseApiKeyScopes(body?.scopes);
    const { key, prefix } = generateApiKey();
    const row: ApiKeyRow = {
      id: randomUUID(), userId, name, prefix, keyHash: sha256Hex(key), createdAt: now, updatedAt: now, expiresAt, deletedAt: null, scopes,
    };
    await this.store.insertApiKey(row);
    return { apiKey: toApiKeyRecord(row), key };
  }

  async list(
    userId: string,
    opts: { withDeleted: boolean; withExpired: boolean; limit: number; offset: number },
  ): Promise<{ list: ApiKeyRecord[]; count: number }> {
    const limit = Math.min(Math.max(Math.floor(opts.limit) || 0, 0), 1000);
    const offset = Math.max(Math.floor(opts.offset) || 0, 0);
    const { list, count } = await this.store.listApiKeys(userId, {
      withDeleted: opts.withDeleted, withExpired: opts.withExpired, limit, offset, now: this.now(),
    });
    return { list: list.map(toApiKeyRecord), count };
  }

  async update(userId: string, apiKeyId: string, body: ApiKeyBody, caller?: readonly Scope[]): Promise<void> {
    const now = this.now();
    if (body?.scopes !== undefined) throw new AuthError(400, 'invalid_scopes', "A key's scopes are set when it is created");
    const row = await this.liveRow(userId, apiKeyId);
    assertWithinScopes(row.scopes, caller);
    const patch: ApiKeyPatch = { updatedAt: now };
    if (body?.name !== undefined) patch.name = parseApiKeyName(body.name);
    if (body?.expiresAt !== undefined) patch.expiresAt = parseApiKeyExpiry(body.expiresAt, now);
    await this.change(row, patch);
  }

  async delete(userId: string, apiKeyId: string): Promise<void> {
    const now = this.now();
    await this.change(await this.liveRow(userId, apiKeyId), { deletedAt: now, updatedAt: now });
  }

  async regenerate(userId: string, apiKeyId: string, caller?: readonly Scope[]): Promise<{ apiKey: ApiKeyRecord; key: string }> {
    const row = await this.liveRow(userId, apiKeyId);
    // The new secret is handed to the caller: it must not be a way to a key that can do more than the caller.
    assertWithinScopes(row.scopes, caller);
    const { key, prefix } = generateApiKey();
    await this.change(row, { keyHash: sha256Hex(key), prefix, updatedAt: this.now() });
    return { apiKey: toApiKeyRecord(await this.liveRow(userId, apiKeyId)), key };
  }

  private async change(row: ApiKeyRow, patch: ApiKeyPatch): Promise<void> {
    this.changes++;
    this.byHash.delete(row.keyHash);
    try {
      await this.store.updateApiKey(row.userId, row.id, patch);
    } finally {
      this.changes++;
      this.byHash.delete(row.keyHash);
    }
  }

  private async liveRow(userId: string, apiKeyId: string): Promise<ApiKeyRow> {
    const row = typeof apiKeyId === 'string' ? await this.store.findApiKey(userId, apiKeyId) : undefined;
    if (!row || row.deletedAt !== null) throw new AuthError(404, 'api_key_not_found', 'API key not found');
    return row;
  }
}

function isLive(row: ApiKeyRow, now: number): boolean {
  return row.deletedAt === null && (row.expiresAt === null || row.expiresAt > now);
}
