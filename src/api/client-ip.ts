/**
 * Who a request comes from, for per-IP budgets and caps. `X-Forwarded-For` is believed only from the proxies
 * TRUST_PROXY names: anyone else could write any address there and get a fresh budget per request.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { normalizeIP } from '@fastify/rate-limit';

/** Whether the hop at `addr` (hop 0 = the TCP peer) is a trusted proxy whose forwarded-for entry is believed. */
export type ProxyTrust = (addr: string, hop: number) => boolean;

/**
 * The trust function for a list of IPs/CIDRs (and proxy-addr's names `loopback`, `linklocal`, `uniquelocal`);
 * `false` for an empty list, which Fastify takes as "use the TCP peer" (its cheaper request type).
 * Throws on an entry that is not an address or range.
 */
export function proxyTrust(list: readonly string[]): ProxyTrust | false {
  return list.length === 0 ? false : proxyAddr.compile([...list]);
}

/**
 * The key a client's budget or cap is counted under, from an address: IPv4-mapped IPv6 as plain IPv4, and
 * IPv6 by its /64 (one subscriber usually holds a whole /64, so single addresses would be free to change).
 */
export function ipKey(ip: string | undefined): string {
  return ip ? normalizeIP(ip) : 'unknown';
}

/**
 * The client of a raw request (an HTTP request, or a websocket upgrade that never reaches Fastify's hooks) as
 * a budget key: the TCP peer, or with trusted proxies the nearest untrusted `X-Forwarded-For` hop. The same
 * rule Fastify applies for `request.ip` when given the same trust (src/api/server.ts).
 */
export function clientIp(req: IncomingMessage, trust: ProxyTrust | false): string {
  return ipKey(trust ? proxyAddr(req, trust) : req.socket.remoteAddress);
}
