/**
 * Refresh-token rotation with a grace window. A client whose access token expired refreshes from several
 * requests at once (the public client's `Balance.listen` sends six), all presenting the same parent. The
 * successor is derived, HMAC(successor secret, parent token), so every one of them can be answered with the
 * same child without storing it in plain text; past the window (or once the child moved on) a presented
 * parent is reuse, and the caller revokes the family (OAuth 2.0 Security BCP, refresh rotation).
 */
import { createHmac } from 'node:crypto';
import type { AuthStore, RefreshTokenRow } from './ports.js';
import { opaqueToken, sha256Hex } from './secrets.js';

export interface IssuedRefreshToken {
  token: string;
  row: RefreshTokenRow;
}

/** What presenting a refresh token leads to. `child` is the token to answer with. */
export type RotationOutcome =
  | { kind: 'rotated'; parent: RefreshTokenRow; child: IssuedRefreshToken }
  | { kind: 'inactive' }
  | { kind: 'reused'; parent: RefreshTokenRow };

export interface RefreshRotationOptions {
  store: AuthStore;
  successorSecret: Buffer;
  refreshTokenTtlMs: number;
  /** How long after a rotation the parent still yields the same child. 0: never. */
  graceMs: number;
  now: () => number;
}

export class RefreshRotation {
  constructor(private readonly opts: RefreshRotationOptions) {}

  /** The first refresh token of a new session (sign-in). */
  first(userId: string, familyId: string): IssuedRefreshToken {
    return this.issued(opaqueToken(), userId, familyId);
  }

  /**
   * Rotates `token`: marks it rotated and stores its successor, or within the grace window answers the
   * successor stored by an earlier (or concurrent) rotation of the same parent.
   */
  async rotate(token: string): Promise<RotationOutcome> {
    const { store, now } = this.opts;
    const hash = sha256Hex(token);
    const parent = await store.findRefreshToken(hash);
    if (!parent || parent.revokedAt !== null) return { kind: 'inactive' };
    if (parent.rotatedAt !== null) return this.again(token, parent);
    if (parent.expiresAt <= now()) return { kind: 'inactive' };
    const child = this.issued(this.successorToken(token), parent.userId, parent.familyId);
    if (await store.rotateRefreshToken(hash, child.row, now())) return { kind: 'rotated', parent, child };
    // Lost a race: to a logout (inactive) or to another refresh of the same parent (the grace decides).
    const current = await store.findRefreshToken(hash);
    if (!current || current.revokedAt !== null) return { kind: 'inactive' };
    return this.again(token, current);
  }

  /** A parent presented after its rotation: its live child within the grace, reuse otherwise. */
  private async again(token: string, parent: RefreshTokenRow): Promise<RotationOutcome> {
    const now = this.opts.now();
    if (parent.rotatedAt === null || !(now < parent.rotatedAt + this.opts.graceMs)) return { kind: 'reused', parent };
    const childToken = this.successorToken(token);
    const child = await this.opts.store.findRefreshToken(sha256Hex(childToken));
    // The child must still be the family's live token: once it was rotated itself, handing it out again
    // would make two live branches.
    const live = child && child.familyId === parent.familyId && child.rotatedAt === null && child.revokedAt === null && child.expiresAt > now;
    if (!live) return { kind: 'reused', parent };
    return { kind: 'rotated', parent, child: { token: childToken, row: child } };
  }

  private successorToken(parentToken: string): string {
    return createHmac('sha256', this.opts.successorSecret).update(parentToken, 'utf8').digest('base64url');
  }

  private issued(token: string, userId: string, familyId: string): IssuedRefreshToken {
    const now = this.opts.now();
    return {
      token,
      row: { tokenHash: sha256Hex(token), familyId, userId, createdAt: now, expiresAt: now + this.opts.refreshTokenTtlMs, rotatedAt: null, revokedAt: null },
    };
  }
}
