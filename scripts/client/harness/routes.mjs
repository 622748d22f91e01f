// The client's REST routes read from its gateway sources: method name, HTTP verb, path template and the
// response type it declares (the T of this.get<T>/authPost<T>/…). Written to routes.json for record.ts.
import { readFileSync } from 'node:fs';

const sources = {
  ExchangeRestGateway: '../exchange-api/src/exchangeRestGateway.ts',
  AuthRestGateway: '../exchange-api/src/authRestGateway.ts',
};
const VERB = { get: 'GET', authGet: 'GET', post: 'POST', authPost: 'POST', authPut: 'PUT', authDelete: 'DELETE', request: '?' };

export function clientRoutes() {
  const routes = [];
  for (const [cls, file] of Object.entries(sources)) {
    const text = readFileSync(file, 'utf8');
    // A public method: `  name(args) {` then its body up to the next method at the same indentation.
    const methods = [...text.matchAll(/^  (?!protected|private|constructor)(\w+)\(([^)]*)\)[^{]*\{([\s\S]*?)^  \}/gm)];
    for (const [, name, , body] of methods) {
      const call = /this\.(get|authGet|post|authPost|authPut|authDelete)<([^>]+(?:>[^>(]*)?)>\(\s*[`"]([^`"]+)[`"]/.exec(body);
      if (call) {
        // getInstruments and getInstrumentsMetrics share the path; the query tells them apart.
        const query = body.includes('InstrumentListQueryField.Metrics') ? 'fields=metrics' : undefined;
        routes.push({ method: `${cls}.${name}`, verb: VERB[call[1]], path: call[3].replace(/\$\{[^}]+\}/g, '{param}'), ...(query && { query }), type: call[2].trim() });
        continue;
      }
      const raw = /request<(\w+)>\(\{\s*method: "(\w+)",\s*url: this\.url\("([^"]+)"\)/.exec(body);
      if (raw) routes.push({ method: `${cls}.${name}`, verb: raw[2], path: raw[3], type: raw[1] });
      else routes.push({ method: `${cls}.${name}`, verb: null, path: null, type: null });
    }
  }
  return routes;
}

if (process.argv[1]?.endsWith('routes.mjs')) console.log(JSON.stringify(clientRoutes(), null, 1));
