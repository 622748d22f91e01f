/**
 * Accounts the demo environment creates for itself: the market makers (wallet addresses derived from a
 * fixed label, with no private key anyone holds, so nobody can sign in as a bot) and a demo wallet whose
 * private key is printed at start-up so a newcomer can sign in and trade at once.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keccak256, toUtf8Bytes, Wallet, getAddress } from 'ethers';
import type { Submit } from '../engine/commands.js';
import type { UserRecord } from '../auth/types.js';
import { parseMoney } from '../domain/fixed.js';
import type { ExchangeEngine } from '../engine/api.js';

export const DEMO_WALLET_FILE = 'demo-wallet.json';

export interface UserDirectory {
  ensureUser(wallet: string): Promise<UserRecord>;
}

/** Address of market maker `i`: the last 20 bytes of keccak256("perpx:market-maker:<i>"). */
export function marketMakerAddress(i: number): string {
  return getAddress('0x' + keccak256(toUtf8Bytes(`perpx:market-maker:${i}`)).slice(-40));
}

/**
 * Tops the account up to `target` (decimal USDT) with a deposit when its balance is below half of it,
 * so restarts do not mint money every time.
 */
export async function fundAccount(engine: ExchangeEngine, submit: Submit, userId: number, target: string): Promise<bigint> {
  const want = parseMoney(target);
  const balance = engine.account(userId).balance;
  if (balance * 2n >= want) return 0n;
  const amount = want - balance;
  const { reply } = await submit({ kind: 'funds.deposit', userId, amount: amount.toString(), transferId: randomUUID() });
  if (!reply.ok) throw new Error(`funding system account ${userId} refused: ${reply.error.message}`);
  return amount;
}

/** Creates (or finds) the market makers' users and funds them. Returns their exchangeIds. */
export async function setUpMarketMakers(users: UserDirectory, engine: ExchangeEngine, submit: Submit, count: number, funds: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const user = await users.ensureUser(marketMakerAddress(i));
    await fundAccount(engine, submit, user.exchangeId, funds);
    ids.push(user.exchangeId);
  }
  return ids;
}

export interface DemoWallet {
  address: string;
  privateKey: string;
  exchangeId: number;
}

/** The demo wallet of this data directory (created on first start, mode 0600), its user and its funds. */
export async function setUpDemoWallet(dataDir: string, users: UserDirectory, engine: ExchangeEngine, submit: Submit, funds: string): Promise<DemoWallet> {
  const path = join(dataDir, DEMO_WALLET_FILE);
  let privateKey: string;
  try {
    privateKey = (JSON.parse(await readFile(path, 'utf8')) as { privateKey: string }).privateKey;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    privateKey = Wallet.createRandom().privateKey;
    await writeFile(path, JSON.stringify({ privateKey, note: 'demo wallet: test funds only' }, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  }
  const wallet = new Wallet(privateKey);
  const user = await users.ensureUser(wallet.address);
  await fundAccount(engine, submit, user.exchangeId, funds);
  return { address: wallet.address, privateKey, exchangeId: user.exchangeId };
}
