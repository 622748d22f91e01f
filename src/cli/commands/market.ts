/** instruments, add-instrument, matcher, trading, index-price. */
import { readFile } from 'node:fs/promises';
import { MATCHER_STATES, TRADING_STATES } from '../../domain/enums.js';
import type { InstrumentConfig } from '../../domain/instrument.js';
import { adminClient } from '../admin-client.js';
import { UsageError, type CommandSpec } from '../command.js';
import { printResult, table } from '../output.js';

interface InstrumentRow {
  config: InstrumentConfig;
  state: { indexPrice: string | null; markPrice: string | null; trading: string } | null;
}

export const instrumentsCommand: CommandSpec = {
  name: 'instruments',
  summary: 'List instruments (configuration and live state)',
  async run({ global }) {
    const list = await (await adminClient(global)).get<InstrumentRow[]>('/api/admin/instruments');
    printResult(global.json, list, () => table(
      ['id', 'trading', 'tick', 'lot', 'maxLev', 'maker', 'taker', 'index (units)', 'mark (units)'],
      list.map(({ config: c, state: s }) => [c.id, s?.trading ?? c.trading, c.priceIncrement, c.quantityIncrement, c.maxLeverage, c.makerFee, c.takerFee, s?.indexPrice, s?.markPrice]),
    ));
  },
};

/** `key=value` → a typed config field (numbers for integer fields, booleans, JSON for arrays). */
function applySetting(config: Record<string, unknown>, setting: string): void {
  const eq = setting.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set expects key=value, got "${setting}"`);
  const key = setting.slice(0, eq);
  const raw = setting.slice(eq + 1);
  if (!(key in config)) throw new UsageError(`--set: unknown instrument field "${key}"`);
  const current = config[key];
  if (typeof current === 'number') config[key] = Number(raw);
  else if (typeof current === 'boolean') config[key] = raw === 'true';
  else if (Array.isArray(current)) config[key] = JSON.parse(raw) as unknown;
  else config[key] = raw;
}

export const addInstrumentCommand: CommandSpec = {
  name: 'add-instrument',
  summary: 'Add (or update) an instrument from a JSON file or by copying another one',
  details: [
    'Either --file <config.json> (a full instrument configuration, see GET /api/admin/instruments), or',
    '--like <instrument> --id <ID> --from <COIN>: copies the other instrument and renames it. --set key=value',
    'overrides any field (e.g. --set priceIncrement=0.01 --set maxLeverage=50). --index-price pushes a first',
    'index price so the market can trade at once.',
    '',
    'Example: perpx add-instrument --like ETHUSDT --id SOLUSDT --from SOL --set priceIncrement=0.001 --index-price 150',
  ].join('\n'),
  options: {
    file: { type: 'string', description: 'Instrument configuration JSON file' },
    like: { type: 'string', description: 'Copy the configuration of this instrument' },
    id: { type: 'string', description: 'New instrument id (with --like), e.g. SOLUSDT' },
    from: { type: 'string', description: 'Base coin (with --like), e.g. SOL' },
    set: { type: 'string', multiple: true, description: 'Override a field: key=value' },
    'index-price': { type: 'string', description: 'First index price' },
  },
  async run({ options, global }) {
    const client = await adminClient(global);
    let config: Record<string, unknown>;
    if (typeof options.file === 'string') {
      config = JSON.parse(await readFile(options.file, 'utf8')) as Record<string, unknown>;
    } else if (typeof options.like === 'string') {
      const like = options.like;
      const list = await client.get<InstrumentRow[]>('/api/admin/instruments');
      const base = list.find((r) => r.config.id === like);
      if (!base) throw new UsageError(`--like: no instrument ${like}`);
      if (typeof options.id !== 'string' || typeof options.from !== 'string') throw new UsageError('--like needs --id and --from');
      const id = options.id;
      config = { ...base.config, id, name: id, from: options.from, displayName: `${options.from}/${base.config.to} Perpetual`, newLabel: true, isPopular: false };
    } else {
      throw new UsageError('add-instrument needs --file or --like (see --help)');
    }
    for (const s of (options.set as string[] | undefined) ?? []) applySetting(config, s);
    const body: Record<string, unknown> = { config };
    if (typeof options['index-price'] === 'string') body.indexPrice = options['index-price'];
    const r = await client.post<{ ok: boolean; seq: number }>('/api/admin/instruments', body);
    printResult(global.json, { ...r, id: config.id }, () => `instrument ${String(config.id)} saved (seq ${r.seq})`);
  },
};

export const matcherCommand: CommandSpec = {
  name: 'matcher',
  summary: `Set the matcher state: ${MATCHER_STATES.join(' | ')} (anything but active halts trading)`,
  args: ['state'],
  async run({ args, global }) {
    const r = await (await adminClient(global)).post<{ seq: number }>('/api/admin/matcher', { state: args.state });
    printResult(global.json, r, () => `matcher is ${args.state} (seq ${r.seq})`);
  },
};

export const tradingCommand: CommandSpec = {
  name: 'trading',
  summary: `Set an instrument's trading state: ${TRADING_STATES.join(' | ')}`,
  args: ['instrument', 'state'],
  async run({ args, global }) {
    const r = await (await adminClient(global)).post<{ seq: number }>(`/api/admin/instruments/${encodeURIComponent(args.instrument ?? '')}/trading`, { trading: args.state });
    printResult(global.json, r, () => `${args.instrument} trading is ${args.state} (seq ${r.seq})`);
  },
};

export const indexPriceCommand: CommandSpec = {
  name: 'index-price',
  summary: 'Push an index price for an instrument (a price.tick command: mark, stops and TP/SL follow)',
  args: ['instrument', 'price'],
  async run({ args, global }) {
    const r = await (await adminClient(global)).post<{ seq: number }>('/api/admin/index-price', { instrument: args.instrument, price: args.price });
    printResult(global.json, r, () => `${args.instrument} index ${args.price} (seq ${r.seq})`);
  },
};
