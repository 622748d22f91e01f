/** Index price feeds: the configured automatic source plus the always-available operator push. */
export { CsvReplayFeed, loadCsvSeries, parseIndexCsv, type CsvRow } from './csv-replay.js';
export { OperatorPush } from './operator-push.js';
export { RandomWalkFeed, XorShift32 } from './random-walk.js';
export { feedInstrumentOf, fitPrice, type FeedInstrument } from './feed-instrument.js';
export type { IndexFeed, PriceSink } from './ports.js';
