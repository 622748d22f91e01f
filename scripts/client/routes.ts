/** The public client's REST routes (read from its gateway sources by the client harness) and which one a request hit. */
export interface ClientRoute {
  /** `ExchangeRestGateway.getOrder`. */
  method: string;
  verb: string | null;
  /** Path template, `{param}` for a segment the client fills in. */
  path: string | null;
  /** `key=value` the route always sends, telling apart routes that share a path. */
  query?: string;
  /** The response type the gateway declares (`Order`, `Trade[]`, `{}`). */
  type: string | null;
}

/** The route a request was made by: same verb, segments equal or a parameter; literal segments and the query win. */
export function matchRoute(routes: readonly ClientRoute[], verb: string, path: string, query: URLSearchParams): ClientRoute | undefined {
  const segments = path.split('/');
  let best: { route: ClientRoute; score: number } | undefined;
  for (const r of routes) {
    if (r.verb !== verb || r.path === null) continue;
    const template = r.path.split('/');
    if (template.length !== segments.length) continue;
    if (!template.every((t, i) => t === '{param}' || t === segments[i])) continue;
    let score = template.filter((t) => t !== '{param}').length * 2;
    if (r.query) {
      const [k, v] = r.query.split('=');
      if (query.get(k) !== v) continue;
      score += 1;
    }
    if (!best || score > best.score) best = { route: r, score };
  }
  return best?.route;
}
