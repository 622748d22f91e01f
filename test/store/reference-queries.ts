/** The same queries as src/store/queries.ts, written the obvious way over in-memory views (test oracle). */
import { canonicalOrderKey } from '../../src/domain/order-id.js';
import type { FillView, FundingChangeView, OrderView, TpSlView, TransferView } from '../../src/engine/records.js';
import { matchesGroupStatus } from '../../src/store/order-status-groups.js';
import type { FillFilter, OneOrMany, OrderFilter, TimeInput, TpSlFilter, TransferFilter } from '../../src/store/types.js';
import type { Reference } from './history-fixture.js';

const list = <T>(v: OneOrMany<T>): readonly T[] | undefined =>
  v === null || v === undefined ? undefined : Array.isArray(v) ? (v.length ? (v as T[]) : undefined) : [v as T];
const ms = (t: TimeInput) => (t instanceof Date ? t.getTime() : typeof t === 'number' ? t : /^\d+$/.test(t) ? Number(t) : Date.parse(t));
const inWindow = (x: number, after: TimeInput | null | undefined, before: TimeInput | null | undefined) =>
  (after == null || x >= ms(after)) && (before == null || x < ms(before));
const cmp = (a: number | string, b: number | string) => (a < b ? -1 : a > b ? 1 : 0);

export function refOrders(ref: Reference, userId: number, f: OrderFilter): OrderView[] {
  const ids = list(f.id)?.map((id) => canonicalOrderKey(id) ?? id);
  const instruments = list(f.instrument);
  const statuses = list(f.status);
  const groups = list(f.group);
  const types = list(f.type);
  const rows = [...ref.orders.values()].filter(
    (o) =>
      o.userId === userId &&
      (!ids || ids.includes(canonicalOrderKey(o.id)!)) &&
      (!instruments || instruments.includes(o.instrument)) &&
      (!statuses || statuses.includes(o.status)) &&
      (!f.side || o.side === f.side) &&
      (!groups || groups.includes(o.group)) &&
      (!types || types.includes(o.type)) &&
      (!f.groupStatus || matchesGroupStatus(o, f.groupStatus)) &&
      (f.triggered == null || (f.triggered === 'yes') === (o.triggeredAt !== null)) &&
      inWindow(o.createdAt, f.after, f.before),
  );
  const sort = f.sort ?? 'created-at-desc';
  const key = sort.startsWith('created') ? 'createdAt' : 'updatedAt';
  const dir = sort.endsWith('asc') ? 1 : -1;
  return rows.sort((a, b) => dir * (cmp(a[key], b[key]) || cmp(a.id, b.id)));
}

type Seqd = { seq: number; ev: number };
const strip = <T extends Seqd>({ seq: _s, ev: _e, ...v }: T): Omit<T, 'seq' | 'ev'> => v;
const newestFirst = (time: (x: any) => number) => (a: Seqd, b: Seqd) =>
  cmp(time(b), time(a)) || b.seq - a.seq || b.ev - a.ev;

export function refFills(ref: Reference, userId: number, f: FillFilter): FillView[] {
  const instruments = list(f.instrument);
  return ref.fills
    .filter((x) => x.userId === userId && (!instruments || instruments.includes(x.instrument)) && inWindow(x.createdAt, f.after, f.before))
    .sort(newestFirst((x) => x.createdAt))
    .map(strip);
}

export function refFunding(ref: Reference, userId: number, f: { after?: TimeInput; before?: TimeInput }): FundingChangeView[] {
  return ref.funding
    .filter((x) => x.userId === userId && inWindow(x.updatedAt, f.after, f.before))
    .sort(newestFirst((x) => x.updatedAt))
    .map(strip);
}

export function refTransfers(ref: Reference, userId: number, f: TransferFilter): TransferView[] {
  const statuses = list(f.status);
  const types = list(f.type);
  return [...ref.transfers.values()]
    .filter((x) => x.userId === userId && (!statuses || statuses.includes(x.status)) && (!types || types.includes(x.type)) && inWindow(x.createdAt, f.after, f.before))
    .sort((a, b) => cmp(b.createdAt, a.createdAt) || cmp(b.id, a.id));
}

export function refTpsl(ref: Reference, userId: number, f: TpSlFilter): TpSlView[] {
  const instruments = list(f.instrument);
  const statuses = list(f.status);
  const trig = list(f.triggeredOrder);
  return [...ref.tpsl.values()]
    .filter(
      (x) =>
        x.userId === userId &&
        (!instruments || instruments.includes(x.instrument)) &&
        (!statuses || statuses.includes(x.status)) &&
        (!f.type || x.type === f.type) &&
        (!trig || (x.triggerOrder !== null && trig.includes(x.triggerOrder))),
    )
    .sort((a, b) => cmp(b.createdAt, a.createdAt) || cmp(b.id, a.id));
}
