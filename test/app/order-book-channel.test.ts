// Order-book channels are built only while someone subscribes; a subscriber still gets the whole current
// book with the next change, including levels that appeared while nobody was listening.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, connected, subscribed, waitFor } from '../realtime/helpers.js';
import { Bot, ok, startTestExchange } from './client.js';

type Book = { instrument: string; orderBook: { asks: Array<{ price: number }>; bids: Array<{ price: number }> } };

test('order-book channel: subscriber gets the current book on the next change', { timeout: 30_000 }, async () => {
  const t = await startTestExchange({ BOOK_PUBLISH_INTERVAL_MS: '10' });
  const c = client(t.ex.wsUrl);
  try {
    const bot = await new Bot(t.url).signIn();
    await bot.faucet();
    // A level placed while nobody subscribes…
    ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90000' }), 'first order');
    c.connect();
    await connected(c);
    const books: Book[] = [];
    const sub = c.newSubscription(`${t.ex.channelPrefix}orderBook-BTCUSDT-0.1`);
    sub.on('publication', (p) => books.push(p.data as Book));
    sub.subscribe();
    await subscribed(sub);
    // …is in the first publication after the subscribe, together with the change that triggered it.
    ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: '91000' }), 'second order');
    await waitFor(() => books.some((b) => b.orderBook.bids.some((l) => l.price === 91000)), 5000, 'book publication');
    const last = books.at(-1)!;
    assert.equal(last.instrument, 'BTCUSDT');
    const bids = last.orderBook.bids.map((l) => l.price);
    assert.ok(bids.includes(90000) && bids.includes(91000), `bids ${bids.join(',')}`);
  } finally {
    c.disconnect();
    await t.stop();
  }
});
