/** Read models: SQL tables projected from engine events, one query layer for SQLite and PostgreSQL. */
export { openReadStore, type ReadStore } from './open.js';
export { Projector, ProjectionGapError, type ProjectionBatch, type ProjectResult } from './projector.js';
export { ProjectionFaults, ProjectionFaultError } from './projection-faults.js';
export { StoreQueries } from './queries.js';
export { DEFAULT_LIMIT, MAX_LIMIT } from './paging.js';
export { matchesGroupStatus } from './order-status-groups.js';
export * from './types.js';
export { StoreStatistics, CHART_GROUPS, MAX_BUCKETS, bucketStarts, periodStart, nextPeriod, type ChartGroup, type BalancePoint, type StatisticsPoint, type BucketWindow } from './user-charts.js';
