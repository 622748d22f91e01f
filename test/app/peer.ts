/**
 * HTTP requests from a chosen loopback source address (127.0.0.2, 127.0.0.3, … are all this machine on
 * Linux), so one test can be several clients with distinct IPs to a real server without trusting any proxy.
 */
import { request } from 'node:http';

export interface PeerRes {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface PeerReq {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Source address of the connection; default the kernel's choice (127.0.0.1). */
  from?: string;
}

export function peerRequest(base: string, path: string, opts: PeerReq = {}): Promise<PeerRes> {
  const url = new URL(path, base);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? 'GET', headers, localAddress: opts.from, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            /* keep the text */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
