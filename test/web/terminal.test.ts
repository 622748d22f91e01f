/**
 * The web terminal, driven in Chromium against a real exchange: sign in with the local wallet, faucet, place a
 * limit order (open orders and book), edit, cancel, take liquidity with a market order, see the position and
 * its live PnL, set TP/SL, close, find it all in history; a second browser sees the trade. Screenshots of the
 * main screens go to test-results/web/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { Bot, ok, startTestExchange, type TestExchange } from '../app/client.js';
import { chromiumSkip, launch, shot, watchErrors } from './browser.js';

const skip = chromiumSkip();
const T = 15_000;

async function signInLocal(page: Page): Promise<void> {
  await page.getByTestId('local-wallet').click();
  await page.getByTestId('wallet-address').waitFor({ timeout: T });
}

async function tab(page: Page, name: string): Promise<void> {
  await page.getByRole('tab', { name: new RegExp(`^${name}`) }).click();
}

describe('web terminal walk', { skip }, () => {
  let tx: TestExchange;
  let browser: Browser;
  let maker: Bot;

  before(async () => {
    tx = await startTestExchange({ MARKET_MAKERS: '0' });
    browser = await launch();
    maker = await new Bot(tx.url).signIn();
    await maker.faucet();
    for (const [p, q] of [['100010', '0.05'], ['100020', '0.05'], ['100030', '0.1']]) ok(await maker.limit({ side: 'SELL', quantity: q!, limitPrice: p!, leverage: 10 }));
    ok(await maker.limit({ side: 'BUY', quantity: '0.2', limitPrice: '99900', leverage: 10 }));
  });
  after(async () => {
    await browser?.close();
    await tx?.stop();
  });

  it('trades through the whole lifecycle at 1440 px', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    const res = await page.goto(tx.url + '/');
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    await page.getByTestId('connection-status').getByText('Live').waitFor({ timeout: T });
    await page.getByTestId('order-book').getByText('100,010.0').waitFor({ timeout: T });
    await shot(page, '01-market-signed-out');

    await signInLocal(page);
    await tab(page, 'Funds');
    await page.getByTestId('faucet').click();
    await page.getByTestId('available').getByText(/^[1-9][\d,]*\.\d\d$/).waitFor({ timeout: T });

    // Limit buy below the market: rests, shows in open orders and in the book.
    const form = page.getByTestId('order-form');
    await form.getByLabel('Price (USDT)').fill('99000');
    await form.getByLabel(/^Size/).fill('0.01');
    await page.getByTestId('est-margin').getByText(/^[1-9]/).waitFor({ timeout: T });
    await page.getByTestId('submit-order').click();
    await tab(page, 'Open orders');
    const openOrder = page.getByTestId('open-order');
    await openOrder.getByText('99,000.00').waitFor({ timeout: T });
    await page.getByTestId('order-book').getByText('99,000.0').waitFor({ timeout: T });
    await shot(page, '02-limit-order-resting');

    // Edit it, then cancel it.
    await openOrder.getByRole('button', { name: 'Edit' }).click();
    await openOrder.getByLabel('New price').fill('99500');
    await openOrder.getByRole('button', { name: 'Save' }).click();
    await openOrder.getByText('99,500.00').waitFor({ timeout: T });
    await page.getByTestId('order-book').getByText('99,500.0').waitFor({ timeout: T });
    await openOrder.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('No open orders').waitFor({ timeout: T });

    // Market buy for 2,000 USDT: takes the maker's asks, opens a long.
    await form.getByRole('tab', { name: 'Market' }).click();
    await form.getByLabel('Notional (USDT)').fill('2000');
    await page.getByTestId('est-liq').getByText(/^([1-9]|none)/).waitFor({ timeout: T });
    await page.getByTestId('submit-order').click();
    await tab(page, 'Positions');
    const position = page.getByTestId('position-BTCUSDT');
    await position.waitFor({ timeout: T });
    const pnlBefore = await position.getByTestId('upnl').textContent();
    // The mark moves (operator index push): the PnL follows live.
    ok(await fetch(`${tx.url}/api/admin/index-price`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-operator-token': tx.ex.operatorToken ?? '' },
      body: JSON.stringify({ instrument: 'BTCUSDT', price: '100500' }),
    }).then(async (r) => ({ status: r.status, body: await r.json() })));
    await position.getByTestId('upnl').filter({ hasNotText: pnlBefore ?? '' }).waitFor({ timeout: T });
    await shot(page, '03-position-open');

    // TP/SL on the position.
    await position.getByLabel('Take-profit price').fill('110000');
    await position.getByLabel('Stop-loss price').fill('90000');
    await position.getByRole('button', { name: 'Set' }).click();
    await position.getByTestId('tpsl-tag').nth(1).waitFor({ timeout: T });

    // Second browser: sees the trade in recent trades and on the chart.
    const other = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page2 = await other.newPage();
    await page2.goto(tx.url + '/');
    await page2.getByTestId('recent-trades').getByText('100,010.0').first().waitFor({ timeout: T });
    await page2.getByTestId('candle-count').getByText(/^[1-9]\d* candles/).waitFor({ timeout: T });
    await shot(page2, '04-second-browser');
    await other.close();

    // Close the position; find everything in history.
    await position.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByText('No open positions').waitFor({ timeout: T });
    await tab(page, 'Order history');
    await page.getByTestId('history-history').getByText('FILLED').first().waitFor({ timeout: T });
    await page.getByTestId('history-history').getByText('CANCELLED').first().waitFor({ timeout: T });
    await shot(page, '05-order-history');
    await tab(page, 'Fills');
    await page.getByTestId('history-fills').getByText('TAKER').first().waitFor({ timeout: T });
    await tab(page, 'Funding');
    await page.getByTestId('history-funding').waitFor({ timeout: T });
    assert.deepEqual(errors, []);
    await ctx.close();
  });
});
