/** Time-driven commands: the index feed (random walk or CSV replay; the operator push) and the funding clock. */
import type pino from 'pino';
import { DEMO_START_PRICES } from '../../domain/instrument.js';
import { parseUnits } from '../../domain/fixed.js';
import type { ExchangeEngine } from '../../engine/api.js';
import type { Submit } from '../../engine/commands.js';
import { CsvReplayFeed, feedInstrumentOf, loadCsvSeries, OperatorPush, RandomWalkFeed, type IndexFeed, type PriceSink } from '../../feeds/index.js';
import type { ExchangeConfig } from '../config.js';
import { FundingClock } from '../funding-clock.js';
import type { Built } from '../shutdown-registry.js';

export interface Feeds {
  /** Operator index push (validated, journaled as a price tick). */
  indexPush: OperatorPush;
}

type FeedConfig = Pick<ExchangeConfig, 'indexFeed' | 'indexFeedIntervalMs' | 'indexFeedSeed' | 'indexFeedVolatility' | 'indexFeedCsv' | 'indexFeedCsvSpeed'>;

/** The configured automatic index source (null = operator push only). */
function createIndexFeed(config: FeedConfig, engine: ExchangeEngine, sink: PriceSink, log: pino.Logger): IndexFeed | null {
  const instruments = () => engine.instrumentConfigs().map(feedInstrumentOf);
  const onError = (err: unknown) => log.warn({ err }, 'index feed submission failed');
  if (config.indexFeed === 'random') {
    const startPrices: Record<string, number> = {};
    for (const [id, p] of Object.entries(DEMO_START_PRICES)) startPrices[id] = parseUnits(p);
    return new RandomWalkFeed({
      instruments, startPrices, sink, onError, intervalMs: config.indexFeedIntervalMs, seed: config.indexFeedSeed,
      volatility: parseUnits(config.indexFeedVolatility), currentIndex: (id) => engine.instrumentState(id)?.indexPrice ?? null,
    });
  }
  if (config.indexFeed === 'csv') {
    if (config.indexFeedCsv === '') throw new Error('INDEX_FEED=csv needs INDEX_FEED_CSV');
    return new CsvReplayFeed({ series: loadCsvSeries(config.indexFeedCsv, instruments()), sink, speed: config.indexFeedCsvSpeed, onError });
  }
  return null;
}

export function buildFeeds(
  config: FeedConfig & Pick<ExchangeConfig, 'fundingIntervalMs' | 'fundingRatePeriodMs'>,
  deps: { engine: ExchangeEngine; submit: Submit; log: pino.Logger },
): Built<Feeds> {
  const { engine, submit, log } = deps;
  const priceSink: PriceSink = async (instrument, indexPrice) => {
    const r = await submit({ kind: 'price.tick', instrument, indexPrice });
    if (!r.reply.ok) throw new Error(`price tick for ${instrument} refused: ${r.reply.error.message}`);
  };
  const indexPush = new OperatorPush(() => engine.instrumentConfigs().map(feedInstrumentOf), priceSink);
  const indexFeed = createIndexFeed(config, engine, priceSink, log.child({ module: 'index-feed' }));
  const fundingClock = new FundingClock({
    intervalMs: config.fundingIntervalMs, ratePeriodMs: config.fundingRatePeriodMs, submit, log: log.child({ module: 'funding' }),
    instruments: () => engine.instrumentConfigs().map((c) => c.id),
    lastSettledAt: (id) => engine.instrumentState(id)?.fundingRateAt ?? null,
  });
  indexFeed?.start();
  fundingClock.start();
  if (indexFeed) log.info({ feed: indexFeed.name }, 'index feed started');
  return {
    service: { indexPush },
    stop: async () => {
      await indexFeed?.stop();
      await fundingClock.stop();
    },
  };
}
