import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { CommandInput } from '../../src/engine/commands.js';

export function tempDir(prefix = 'perpx-journal-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const silentLogger = pino({ level: 'silent' });

export function deposit(i: number, userId = 1 + (i % 7)): CommandInput {
  return { kind: 'funds.deposit', userId, amount: String(1000 + i), transferId: `t${i}` };
}
