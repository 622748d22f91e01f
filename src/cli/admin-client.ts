/** HTTP client for /api/admin/*: sends the operator token, turns error bodies into AdminApiError. */
import { OPERATOR_TOKEN_HEADER, readOperatorToken } from '../auth/operator-token.js';
import type { GlobalOptions } from './command.js';

export class AdminApiError extends Error {
  override name = 'AdminApiError';
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export interface AdminClient {
  get<T = unknown>(path: string): Promise<T>;
  post<T = unknown>(path: string, body?: unknown): Promise<T>;
}

export async function adminClient(g: GlobalOptions): Promise<AdminClient> {
  const token = g.token ?? (await readOperatorToken(g.dataDir));
  if (!token) {
    throw new AdminApiError(0, 'NO_OPERATOR_TOKEN', `No operator token: pass --token, set PERPX_OPERATOR_TOKEN, or point --data-dir at the exchange's data directory`);
  }
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${g.url}${path}`, {
        method,
        headers: { [OPERATOR_TOKEN_HEADER]: token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
    } catch (err) {
      throw new AdminApiError(0, 'UNREACHABLE', `Cannot reach ${g.url}: ${(err as Error).cause ?? (err as Error).message}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const e = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new AdminApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? text.slice(0, 200));
    }
    return json as T;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body ?? {}) };
}
