/**
 * Sign-in (EIP-4361 with this page's own origin as domain and URI) and the session's tokens. The refresh token
 * stays in localStorage so a reload keeps the trader signed in; concurrent refreshes share one request.
 */
import { SiweMessage } from 'siwe';
import { api, ApiFailure, setAuth } from './api.js';
import type { TypedDataSigner } from './signing.js';

export interface SessionUser { id: string; wallet: string; exchangeId: number }

const REFRESH_KEY = 'perpx.refreshToken';

/** True when the JWT's `exp` is less than `ms` away (or unreadable). */
export function expiresWithin(jwt: string, ms: number): boolean {
  try {
    const payload = JSON.parse(atob(jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    return typeof payload.exp !== 'number' || payload.exp * 1000 - Date.now() < ms;
  } catch {
    return true;
  }
}

export class Session {
  accessToken: string | null = null;
  private refreshing: Promise<boolean> | null = null;
  onChange: () => void = () => {};
  onExpired: () => void = () => {};

  constructor(readonly signer: TypedDataSigner, readonly chainId: string, public user: SessionUser | null = null) {
    setAuth({ token: () => this.accessToken, refresh: () => this.refresh() });
  }

  private get refreshToken(): string | null {
    return localStorage.getItem(`${REFRESH_KEY}.${this.signer.address.toLowerCase()}`);
  }

  private set refreshToken(t: string | null) {
    const k = `${REFRESH_KEY}.${this.signer.address.toLowerCase()}`;
    if (t) localStorage.setItem(k, t);
    else localStorage.removeItem(k);
  }

  async signIn(): Promise<void> {
    const nonce = await api.GET('/auth/nonce');
    if (!nonce.data) throw new ApiFailure('Could not get a sign-in nonce', nonce.response.status, 'NONCE');
    const message = new SiweMessage({
      scheme: location.protocol.replace(':', ''),
      domain: location.host,
      address: this.signer.address,
      statement: `Sign in to the perpx terminal at ${location.host}`,
      uri: location.origin,
      version: '1',
      chainId: Number(this.chainId),
      nonce: (nonce.data as { nonce: string }).nonce,
      issuedAt: new Date().toISOString(),
    }).prepareMessage();
    const signature = await this.signer.signMessage(message);
    const r = await api.POST('/auth/user/sign-up', { body: { wallet: this.signer.address, message, nonce: (nonce.data as { nonce: string }).nonce, signature } as never });
    if (!r.data) {
      const e = r.error as { error?: { message?: string; code?: string } } | undefined;
      throw new ApiFailure(e?.error?.message ?? 'Sign-in failed', r.response.status, e?.error?.code ?? 'SIGN_IN');
    }
    this.accept(r.data as { token: { accessToken: string; refreshToken: string } });
    await this.loadUser();
  }

  /** Resumes from a stored refresh token; false when there is none or it is no longer active. */
  async resume(): Promise<boolean> {
    if (!this.refreshToken) return false;
    if (!(await this.refresh())) return false;
    await this.loadUser();
    return true;
  }

  private accept(d: { token: { accessToken: string; refreshToken: string } }): void {
    this.accessToken = d.token.accessToken;
    this.refreshToken = d.token.refreshToken;
    this.onChange();
  }

  private async loadUser(): Promise<void> {
    const me = await api.GET('/api/user/me', { headers: { authorization: `Bearer ${this.accessToken}` } });
    if (!me.data) throw new ApiFailure('Could not load the account', me.response.status, 'ME');
    const u = me.data as unknown as SessionUser;
    this.user = { id: u.id, wallet: u.wallet, exchangeId: u.exchangeId };
    this.onChange();
  }

  /** POST /auth/refresh with the refresh token; one request however many callers ask at once. */
  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      const token = this.refreshToken;
      if (!token) return false;
      try {
        const r = await fetch('/auth/refresh', { method: 'POST', headers: { authorization: `Bearer ${token}` } });
        if (r.status === 401) {
          this.refreshToken = null;
          this.accessToken = null;
          this.onExpired();
          return false;
        }
        if (!r.ok) return false;
        this.accept(await r.json());
        return true;
      } catch {
        return false;
      }
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** A usable access token for a private subscription (refreshed first when missing). */
  async token(): Promise<string> {
    if (!this.accessToken || expiresWithin(this.accessToken, 15_000)) await this.refresh();
    return this.accessToken ?? '';
  }

  async signOut(): Promise<void> {
    const token = this.accessToken;
    this.accessToken = null;
    this.refreshToken = null;
    if (token) await fetch('/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => undefined);
  }
}
