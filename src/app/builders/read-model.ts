/** The history read model: SQLite (DATA_DIR/read.db) or PostgreSQL, and the statistics folded from it. */
import { join } from 'node:path';
import { openReadStore, type ReadStore } from '../../store/index.js';
import { ExchangeStatistics } from '../../store/exchange-statistics.js';
import type { ProjectionFaults } from '../../store/projection-faults.js';
import { UserHistory } from '../../store/user-history.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export interface ReadModel {
  store: ReadStore;
  /** The SQLite file, when the read model is SQLite (the projection thread opens its own connection). */
  sqliteFile: string | undefined;
  /** Last seq the read model holds: recovery starts from a snapshot no newer than this. */
  projectedSeq: number;
  /** Rolling 24 h instrument statistics and the exchange-wide charts. */
  statistics: ExchangeStatistics;
  userHistory: UserHistory;
}

export async function buildReadModel(
  config: Pick<ExchangeConfig, 'readStoreUrl'>,
  dataDir: string,
  faults?: ProjectionFaults,
): Promise<Built<ReadModel>> {
  const sqliteFile = config.readStoreUrl === '' ? join(dataDir, 'read.db') : undefined;
  const store = await openReadStore(
    sqliteFile !== undefined ? { kind: 'sqlite', file: sqliteFile } : { kind: 'postgres', connectionString: config.readStoreUrl },
    faults,
  );
  const projectedSeq = await closingOnFailure(store, () => store.projector.lastSeq());
  return {
    service: {
      store,
      sqliteFile,
      projectedSeq,
      statistics: new ExchangeStatistics(store.db),
      userHistory: new UserHistory(store.db, store.statistics),
    },
    stop: () => store.close(),
  };
}
