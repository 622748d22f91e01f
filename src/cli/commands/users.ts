/** deposit, grant-role, export-history. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { adminClient } from '../admin-client.js';
import { UsageError, type CommandSpec } from '../command.js';
import { printResult } from '../output.js';

function exchangeIdOf(raw: string | undefined): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`exchangeId must be a positive integer, got "${raw}"`);
  return n;
}

export const depositCommand: CommandSpec = {
  name: 'deposit',
  summary: "Credit USDT collateral to a user's account (by exchangeId, see GET /api/user/me)",
  args: ['exchangeId', 'amount'],
  async run({ args, global }) {
    const id = exchangeIdOf(args.exchangeId);
    const r = await (await adminClient(global)).post<{ transferId: string }>(`/api/admin/users/${id}/deposit`, { amount: args.amount });
    printResult(global.json, r, () => `deposited ${args.amount} USDT to user ${id} (transfer ${r.transferId})`);
  },
};

export const grantRoleCommand: CommandSpec = {
  name: 'grant-role',
  summary: 'Set a user\'s role: admin (may use /api/admin with their JWT) or user',
  args: ['exchangeId', 'role'],
  async run({ args, global }) {
    const id = exchangeIdOf(args.exchangeId);
    const r = await (await adminClient(global)).post<{ wallet: string; role: string }>(`/api/admin/users/${id}/role`, { role: args.role });
    printResult(global.json, r, () => `user ${id} (${r.wallet}) is now ${r.role}`);
  },
};

/** RFC 4180 field: quoted when it holds a comma, quote or newline; objects as JSON. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const PAGE = 500;

export const exportHistoryCommand: CommandSpec = {
  name: 'export-history',
  summary: "Export a user's orders or fills to CSV (oldest first)",
  args: ['exchangeId'],
  options: {
    kind: { type: 'string', description: 'orders or fills', default: 'fills' },
    out: { type: 'string', short: 'o', description: 'Output file (default stdout)' },
  },
  async run({ args, options, global }) {
    const id = exchangeIdOf(args.exchangeId);
    const kind = options.kind as string;
    if (kind !== 'orders' && kind !== 'fills') throw new UsageError(`--kind must be orders or fills, got "${kind}"`);
    const client = await adminClient(global);
    const out = typeof options.out === 'string' ? createWriteStream(options.out) : process.stdout;
    const write = async (line: string) => {
      if (!out.write(line + '\n')) await once(out, 'drain');
    };
    let columns: string[] | undefined;
    let offset = 0;
    let rows = 0;
    for (;;) {
      const page = await client.get<{ list: Array<Record<string, unknown>>; count: number }>(
        `/api/admin/users/${id}/history/${kind}?offset=${offset}&limit=${PAGE}`,
      );
      for (const row of page.list) {
        if (!columns) {
          columns = Object.keys(row);
          await write(columns.map(csvField).join(','));
        }
        await write(columns.map((c) => csvField(row[c])).join(','));
        rows++;
      }
      offset += page.list.length;
      if (page.list.length < PAGE || offset >= page.count) break;
    }
    if (out !== process.stdout) {
      (out as ReturnType<typeof createWriteStream>).end();
      await once(out, 'finish');
      process.stderr.write(`${rows} ${kind} of user ${id} written to ${options.out as string}\n`);
    }
  },
};
