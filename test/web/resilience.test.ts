/**
 * The web terminal at 390 px, with an injected EIP-1193 wallet (a test shim whose signatures come from an
 * ethers wallet in the test), through an access-token expiry and a restart of the exchange on the same port.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBytes, Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { Bot, ok, RAISED_RATE_LIMITS } from '../app/client.js';
import { chromiumSkip, launch, shot, watchErrors } from './browser.js';

const skip = chromiumSkip();
const T = 20_000;
const TTL_SEC = 3;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** window.ethereum backed by `wallet` in the test process (exposeFunction), as an extension would be. */
async function injectWallet(page: Page, wallet: Pick<Wallet, 'address' | 'signMessage' | 'signTypedData'>, chainId: string): Promise<string[]> {
  const calls: string[] = [];
  await page.exposeFunction('__perpxWalletRequest', async (method: string, params: unknown[]) => {
    calls.push(method);
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [wallet.address];
      case 'eth_chainId':
        return `0x${BigInt(chainId).toString(16)}`;
      case 'net_version':
        return chainId;
      case 'personal_sign':
        return wallet.signMessage(getBytes(params[0] as string));
      case 'eth_signTypedData_v4': {
        const { domain, types, message } = JSON.parse(params[1] as string);
        delete types.EIP712Domain;
        return wallet.signTypedData(domain, types, message);
      }
      default:
        throw new Error(`unsupported ${method}`);
    }
  });
  // A string, not a function: tsx's transform would put its helpers into a serialized function.
  await page.addInitScript(`window.ethereum = {
    request: ({ method, params }) => window.__perpxWalletRequest(method, params ?? []),
    on() {}, removeListener() {},
  };`);
  return calls;
}

describe('web terminal: 390 px, injected wallet, token expiry, restart', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-web-'));
  let port: number;
  let ex: RunningExchange;
  let browser: Browser;
  let url: string;
  const start = async () => {
    ex = await startExchange(loadConfig({
      PORT: String(port), DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', HEARTBEAT_MS: '1000', MARKET_MAKERS: '0',
      DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', ACCESS_TOKEN_TTL_SEC: String(TTL_SEC), ...RAISED_RATE_LIMITS,
    }));
    url = ex.url;
  };

  before(async () => {
    port = await freePort();
    await start();
    browser = await launch();
    const maker = await new Bot(url).signIn();
    await maker.faucet();
    ok(await maker.limit({ side: 'SELL', quantity: '0.1', limitPrice: '100010', leverage: 10 }));
  });
  after(async () => {
    await browser?.close();
    await ex?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with window.ethereum, trades at 390 px, and rides out expiry and a restart', async () => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    const wallet = Wallet.createRandom();
    const calls = await injectWallet(page, wallet, ex.chainId);
    await page.goto(url + '/');
    await page.getByTestId('connection-status').getByText('Live').waitFor({ timeout: T });
    await shot(page, '10-mobile-chart');

    await page.getByRole('button', { name: 'Trade', exact: true }).click();
    await page.getByRole('button', { name: 'Browser wallet' }).click();
    await page.getByTestId('wallet-address').waitFor({ timeout: T });
    assert.ok(calls.includes('personal_sign'), 'SIWE signed through the injected wallet');
    await page.getByRole('tab', { name: 'Funds' }).click();
    await page.getByTestId('faucet').click();
    await page.getByTestId('available').getByText(/^[1-9]/).waitFor({ timeout: T });

    const form = page.getByTestId('order-form');
    await form.getByLabel('Price (USDT)').fill('99000');
    await form.getByLabel(/^Size/).fill('0.01');
    await page.getByTestId('submit-order').click();
    await page.getByRole('tab', { name: /^Open orders/ }).click();
    await page.getByTestId('open-order').first().waitFor({ timeout: T });
    assert.ok(calls.includes('eth_signTypedData_v4'), 'the order was signed with EIP-712 through the injected wallet');
    await shot(page, '11-mobile-trade');

    // Access token expiry: the next order refreshes the session by itself.
    const expired = Date.now() + (TTL_SEC + 1) * 1000;
    while (Date.now() < expired) await new Promise((r) => setTimeout(r, 250));
    await form.getByLabel('Price (USDT)').fill('98000');
    await page.getByTestId('submit-order').click();
    await page.getByTestId('open-order').nth(1).waitFor({ timeout: T });

    // Restart on the same port: the page shows it is offline, reconnects, and keeps working.
    await ex.close();
    await page.getByTestId('connection-status').getByText(/Offline|Connecting/).waitFor({ timeout: T });
    await start();
    await page.getByTestId('connection-status').getByText('Live').waitFor({ timeout: T });
    await form.getByRole('tab', { name: 'Market' }).click();
    await form.getByLabel('Notional (USDT)').fill('1000');
    await page.getByTestId('submit-order').click();
    await page.getByRole('tab', { name: /^Positions/ }).click();
    await page.getByTestId('position-BTCUSDT').waitFor({ timeout: T });
    // Private channels are live again after the reconnect: a cancel shows without a reload.
    await page.getByRole('tab', { name: /^Open orders/ }).click();
    await page.getByRole('button', { name: 'Cancel all' }).click();
    await page.getByText('No open orders').waitFor({ timeout: T });
    await page.getByRole('button', { name: 'Book & trades' }).click();
    await page.getByTestId('recent-trades').getByText('100,010.0').first().waitFor({ timeout: T });
    await shot(page, '12-mobile-book');
    assert.deepEqual(errors, []);
    await ctx.close();
  });
});
