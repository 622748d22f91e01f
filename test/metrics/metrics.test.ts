// GET /metrics on the real exchange: the numbers must follow what actually happened (commands, book,
// websocket connections), not just be present.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, http, ok, startTestExchange, type TestExchange } from '../app/client.js';
import { client, connected, subscribed } from '../realtime/helpers.js';

/** Prometheus text → map of `name{labels}` → value. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function scrape(url: string): Promise<{ m: Map<string, number>; text: string; type: string | null }> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  return { m: parse(text), text, type: res.headers.get('content-type') };
}

describe('/metrics', () => {
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange();
  });
  after(async () => {
    await X?.stop();
  });

  test('commands by kind, latency histograms, journal fsync, book depth, connections, reserve fund', async () => {
    const a = await new Bot(X.url).signIn();
    const b = await new Bot(X.url).signIn();
    await a.faucet();
    await b.faucet();
    ok(await a.limit({ side: 'BUY', quantity: '0.5', limitPrice: '99000' }), 'bid 1');
    ok(await a.limit({ side: 'BUY', quantity: '0.25', limitPrice: '98000' }), 'bid 2');
    ok(await b.limit({ side: 'SELL', quantity: '0.125', limitPrice: '101000' }), 'ask');
    // A refused command (unknown order) counts as refused, not ok.
    assert.equal((await a.del('/api/order/20000:00000000000000000000000000')).status >= 400, true);

    const ws = client(X.ex.wsUrl);
    ws.connect();
    await connected(ws);
    const sub = ws.newSubscription(`${X.ex.channelPrefix}orderBook-BTCUSDT-best`);
    const subOk = subscribed(sub);
    sub.subscribe();
    await subOk;

    const { m, text, type } = await scrape(X.url);
    ws.disconnect();
    assert.match(type ?? '', /^text\/plain/);
    const stats = X.ex.sequencer.stats;
    const total = Object.values(stats.commandsByKind).reduce((s, n) => s + (n ?? 0), 0);

    assert.equal(m.get('perpx_commands_total{kind="order.place",outcome="ok"}'), 3);
    assert.equal(m.get('perpx_commands_total{kind="funds.deposit",outcome="ok"}'), 2);
    assert.equal(m.get('perpx_commands_total{kind="instrument.upsert",outcome="ok"}'), 2);
    const okSum = [...m].filter(([k]) => k.startsWith('perpx_commands_total{')).reduce((s, [, v]) => s + v, 0);
    assert.equal(okSum, total);
    assert.equal(m.get('perpx_engine_seq'), X.ex.engine.seq);
    // The operator's status counts the same commands (a cluster gateway asks the leader for both).
    const status = ok(await http(X.url, 'GET', '/api/admin/status', undefined, { 'x-operator-token': X.ex.operatorToken }));
    assert.deepEqual(status.commandsByKind, stats.commandsByKind);

    assert.equal(m.get('perpx_command_latency_seconds_count'), total);
    assert.equal(m.get('perpx_command_latency_seconds_bucket{le="+Inf"}'), total);
    assert.ok((m.get('perpx_command_latency_seconds_sum') ?? 0) > 0);
    assert.equal(m.get('perpx_command_apply_seconds_count'), total);
    const flushes = m.get('perpx_journal_fsync_seconds_count') ?? 0;
    assert.ok(flushes >= 1 && flushes <= total, `flushes ${flushes}`);
    assert.equal(m.get('perpx_journal_flushes_total'), flushes);
    // A refusal that changed nothing is applied and counted but never journaled: durable commands = engine seq.
    assert.equal(m.get('perpx_journal_flushed_commands_total'), X.ex.engine.seq);
    assert.ok(X.ex.engine.seq < total, 'the refused command was counted, not journaled');
    // Buckets are cumulative.
    const buckets = [...m].filter(([k]) => k.startsWith('perpx_journal_fsync_seconds_bucket')).map(([, v]) => v);
    assert.deepEqual(buckets, [...buckets].sort((x, y) => x - y));

    assert.equal(m.get('perpx_book_depth{instrument="BTCUSDT",side="bid"}'), 0.75);
    assert.equal(m.get('perpx_book_depth{instrument="BTCUSDT",side="ask"}'), 0.125);
    assert.equal(m.get('perpx_book_levels{instrument="BTCUSDT",side="bid"}'), 2);
    assert.equal(m.get('perpx_book_depth{instrument="ETHUSDT",side="bid"}'), 0);

    assert.equal(m.get('perpx_realtime_connections'), 1);
    assert.equal(m.get('perpx_realtime_subscriptions'), 1);
    assert.equal(m.get('perpx_reserve_fund_usdt'), 0);
    assert.ok(text.includes('# TYPE perpx_command_latency_seconds histogram'), 'histogram type line');
    assert.ok(text.includes('\nperpx_process_resident_memory_bytes '), 'process metrics');

    // Trades move fees; the scrape after sees them.
    ok(await b.limit({ side: 'SELL', quantity: '0.5', limitPrice: '99000' }), 'taker sell');
    const after2 = (await scrape(X.url)).m;
    assert.equal(after2.get('perpx_book_depth{instrument="BTCUSDT",side="bid"}'), 0.25);
    assert.equal(after2.get('perpx_fees_collected_usdt'), 0.5 * 99000 * (0.0002 + 0.0005));
    assert.equal(after2.get('perpx_commands_total{kind="order.place",outcome="ok"}'), 4);
  });

  test('/metrics is not under the admin guard and is absent from the OpenAPI document', async () => {
    const doc = ok(await http(X.url, 'GET', '/openapi.json')) as { paths: Record<string, unknown> };
    assert.equal(doc.paths['/metrics'], undefined);
    assert.ok(doc.paths['/api/admin/status'], 'admin routes are documented');
  });
});
