/**
 * verify-journal: replays the journal from zero in a separate engine and compares the state hash with
 * the expected one. Offline (default): the expected state is what a restart would recover (newest
 * snapshot + journal tail) from the data directory. With --online: the running server's checkpoint
 * (a durable seq and its state hash); the replay still reads the journal itself: the file in the data
 * directory, or with JOURNAL=jetstream the stream and snapshot bucket the exchange's configuration names.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, restoreEngine } from '../../engine/engine.js';
import { buildJournal } from '../../app/builders/journal.js';
import { loadConfig } from '../../app/config.js';
import { recoverWithReport, verifyJournal, type ProgressCallback } from '../../sequencer/recovery.js';
import { adminClient } from '../admin-client.js';
import { UsageError, type CommandSpec } from '../command.js';
import { printResult } from '../output.js';
import { ProgressBar } from '../progress-bar.js';

export class VerificationFailed extends Error {
  override name = 'VerificationFailed';
}

export const verifyJournalCommand: CommandSpec = {
  name: 'verify-journal',
  summary: 'Replay the journal from zero and compare state hashes (offline on --data-dir, or --online)',
  details: [
    'Offline: expected = newest snapshot + journal tail (what a restart loads); replayed = every command',
    'from seq 1 in a fresh engine. Both must have the same state hash and the replay must pass the engine',
    'invariants. Best run on a stopped exchange; use --online while it runs.',
    'Online: expected = the running server\'s checkpoint (POST /api/admin/checkpoint).',
    'With JOURNAL=jetstream (and NATS_URL, CLUSTER_NAME and the NATS credentials as the exchange has them) it reads the JetStream stream.',
    'Exit code 0 = verified, 1 = mismatch or error.',
  ].join('\n'),
  options: {
    online: { type: 'boolean', description: "Compare with the running server's state instead of the snapshot" },
  },
  async run({ options, global }) {
    const config = loadConfig(process.env);
    const file = join(global.dataDir, 'journal.db');
    if (config.journal === 'sqlite' && !existsSync(file)) throw new UsageError(`no journal at ${file} (use --data-dir)`);
    const expectedFromServer = options.online ? await (await adminClient(global)).post<{ seq: number; stateHash: string }>('/api/admin/checkpoint') : undefined;
    // Inline writer: nothing is appended, and no writer thread is worth starting for a read.
    const durable = await buildJournal({ ...config, journalWriter: 'inline' }, global.dataDir);
    const { journal, snapshots } = durable.service;
    try {
      let expected: { seq: number; stateHash: string; source: string };
      if (expectedFromServer) {
        expected = { ...expectedFromServer, source: 'server checkpoint' };
      } else {
        const { engine: recovered, report } = await recoverWithReport({ journal, snapshots, createEngine, restoreEngine });
        const skipped = report.skippedSnapshots.map((x) => `snapshot ${x.seq} skipped: ${x.reason}`).join('; ');
        const from = report.snapshotSeq > 0 ? `snapshot ${report.snapshotSeq} + journal tail` : 'journal (no usable snapshot)';
        expected = { seq: recovered.seq, stateHash: recovered.stateHash(), source: skipped ? `${from}; ${skipped}` : from };
      }
      const bar = global.json ? undefined : new ProgressBar('replaying');
      const onProgress: ProgressCallback = (p) => bar?.update(p.replayed, p.targetSeq);
      const t0 = Date.now();
      const result = await verifyJournal({ journal, createEngine, expected, onProgress, progressEvery: 5_000 });
      bar?.finish();
      const report = { ...result, expectedFrom: expected.source, ms: Date.now() - t0 };
      printResult(global.json, report, () => [
        `${result.ok ? 'OK' : 'MISMATCH'}: replayed ${result.seq} commands in ${report.ms} ms`,
        `  expected (${expected.source}): ${result.expectedHash}`,
        `  replayed from zero:        ${result.replayedHash}`,
        ...(result.invariantError ? [`  invariant violated: ${result.invariantError}`] : []),
      ].join('\n'));
      if (!result.ok) throw new VerificationFailed('journal verification failed');
    } finally {
      await durable.stop();
    }
  },
};
