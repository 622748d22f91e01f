/**
 * Which SIWE `domain` / `URI` values we accept. Patterns: `host` (no port), `host:port`, or
 * `host:*` (any port, or none). The default accepts the public client (evedex.com,
 * https://evedex.com) and local development on localhost / 127.0.0.1.
 */
export const DEFAULT_ALLOWED_DOMAINS = ['evedex.com', 'localhost:*', '127.0.0.1:*'];

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function splitAuthority(authority: string): { host: string; port: string | null } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority.toLowerCase());
  if (!m) return { host: '', port: null };
  return { host: m[1], port: m[2] ?? null };
}

export class OriginAllowList {
  private readonly patterns: Array<{ host: string; port: string | null; anyPort: boolean }>;

  constructor(patterns: string[] = DEFAULT_ALLOWED_DOMAINS) {
    this.patterns = patterns.map((p) => {
      const lower = p.trim().toLowerCase();
      if (lower.endsWith(':*')) return { host: lower.slice(0, -2), port: null, anyPort: true };
      const { host, port } = splitAuthority(lower);
      return { host, port, anyPort: false };
    });
  }

  /** `authority` is host[:port] as in the SIWE first line (userinfo is refused). */
  allowsDomain(authority: string): boolean {
    if (authority.includes('@')) return false;
    const { host, port } = splitAuthority(authority);
    if (!host) return false;
    return this.patterns.some((p) => p.host === host && (p.anyPort || p.port === port));
  }

  /** https URIs on an allowed host; plain http only for loopback hosts. */
  allowsUri(uri: string): boolean {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    if (url.username || url.password) return false;
    const httpOk = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
    return httpOk && this.allowsDomain(url.host);
  }
}
