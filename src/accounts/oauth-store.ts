/**
 * Where OAuth keeps its integrations and requests (the flow's rules are in oauth.ts). Adapters: sqlite-oauth.ts
 * (one process, auth.db) and pg-oauth.ts (every gateway of a cluster, AUTH_STORE=postgres). Every state change is
 * one conditional statement, so two gateways racing on one request (two approvals, two code exchanges) let
 * exactly one win without a lock held across round trips.
 */
import type { Scope as OauthScope } from '../auth/types.js';

export interface OauthIntegration {
  id: string;
  name: string;
  description: string;
  redirectUri: string;
  scopes: OauthScope[];
  createdAt: number;
}

export type OauthRequestStatus = 'pending' | 'approved' | 'rejected' | 'revoked';

export interface OauthRequest {
  id: string;
  integrationId: string;
  scopes: OauthScope[];
  state: string;
  status: OauthRequestStatus;
  /** set when a signed-in user decided */
  userId: string | null;
  createdAt: number;
  /** pending: the consent must happen before; approved: the grant is valid until */
  expiresAt: number;
  decidedAt: number | null;
}

/** An integration with the sha256 of its client secret (never the secret). */
export interface StoredIntegration extends OauthIntegration {
  secretHash: string;
}

/** What an approval writes: the grant's expiry and the single-use code (sha256) with its own expiry. */
export interface Approval {
  userId: string;
  decidedAt: number;
  grantExpiresAt: number;
  codeHash: string;
  codeExpiresAt: number;
}

export interface OauthStore {
  insertIntegration(integration: StoredIntegration): Promise<void>;
  integration(id: string): Promise<StoredIntegration | undefined>;
  /** Oldest first. */
  integrations(): Promise<StoredIntegration[]>;

  /** Stores a new pending request, first dropping pending requests expired by `now` (nobody can decide them). */
  openRequest(request: OauthRequest, now: number): Promise<void>;
  request(id: string): Promise<OauthRequest | undefined>;
  /** Pending and unexpired at `approval.decidedAt` → approved with the code; the updated request, or undefined. */
  approve(id: string, approval: Approval): Promise<OauthRequest | undefined>;
  /** Pending and unexpired at `now` → rejected; the updated request, or undefined. */
  reject(id: string, userId: string | null, now: number): Promise<OauthRequest | undefined>;
  /**
   * Trades an approved request's unexpired code (of this integration) for the grant: the code is cleared and the
   * grant's hash stored in one step, so a code is redeemed once. The request, or undefined when nothing matched.
   */
  redeemCode(integrationId: string, codeHash: string, grantHash: string, now: number): Promise<OauthRequest | undefined>;
  /** The approved request whose grant has this hash (expiry is the caller's check). */
  byGrant(grantHash: string): Promise<OauthRequest | undefined>;
  /** Approved request of this user → revoked (code and grant cleared); false when there was none. */
  revoke(id: string, userId: string): Promise<boolean>;
  /** The user's approved and revoked requests (and rejected ones with `withRejected`), newest first, with the count. */
  listForUser(userId: string, opts: { withRejected: boolean; limit: number; offset: number }): Promise<{ list: OauthRequest[]; count: number }>;
}

/** A stored row of either adapter (PostgreSQL hands back int8 as strings; scopes are a JSON array). */
export interface IntegrationRow {
  id: string; name: string; description: string; redirect_uri: string; scopes: string; secret_hash: string; created_at: number | string;
}
export interface RequestRow {
  id: string; integration_id: string; scopes: string; state: string; status: OauthRequestStatus; user_id: string | null;
  created_at: number | string; expires_at: number | string; decided_at: number | string | null;
}

export const toStoredIntegration = (r: IntegrationRow): StoredIntegration => ({
  id: r.id, name: r.name, description: r.description, redirectUri: r.redirect_uri, scopes: JSON.parse(r.scopes) as OauthScope[],
  createdAt: Number(r.created_at), secretHash: r.secret_hash,
});

export const toRequest = (r: RequestRow): OauthRequest => ({
  id: r.id, integrationId: r.integration_id, scopes: JSON.parse(r.scopes) as OauthScope[], state: r.state, status: r.status, userId: r.user_id,
  createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), decidedAt: r.decided_at === null ? null : Number(r.decided_at),
});

/** The statuses a user's list shows. */
export const listedStatuses = (withRejected: boolean): OauthRequestStatus[] => (withRejected ? ['approved', 'revoked', 'rejected'] : ['approved', 'revoked']);
