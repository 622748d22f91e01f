/**
 * Fixed UTC calendars for checking chart periods without the project's own period functions
 * (src/store/user-charts.ts): month and year starts written out, weeks counted from a Monday known by name,
 * days and hours as fixed lengths (UTC has no daylight saving). Covers 2024-01-01 to 2027-12-31.
 */
type Group = 'hour' | 'day' | 'week' | 'month' | 'year';

const YEARS = ['2024-01-01', '2025-01-01', '2026-01-01', '2027-01-01', '2028-01-01'];
const MONTHS = [
  '2024-01-01', '2024-02-01', '2024-03-01', '2024-04-01', '2024-05-01', '2024-06-01',
  '2024-07-01', '2024-08-01', '2024-09-01', '2024-10-01', '2024-11-01', '2024-12-01',
  '2025-01-01', '2025-02-01', '2025-03-01', '2025-04-01', '2025-05-01', '2025-06-01',
  '2025-07-01', '2025-08-01', '2025-09-01', '2025-10-01', '2025-11-01', '2025-12-01',
  '2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01', '2026-06-01',
  '2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01', '2026-12-01',
  '2027-01-01', '2027-02-01', '2027-03-01', '2027-04-01', '2027-05-01', '2027-06-01',
  '2027-07-01', '2027-08-01', '2027-09-01', '2027-10-01', '2027-11-01', '2027-12-01',
  '2028-01-01',
];
/** Monday, 1 January 2024: chart weeks start on Mondays. */
const FIRST_MONDAY = '2024-01-01';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const ms = (isoDay: string) => Date.parse(`${isoDay}T00:00:00.000Z`);
const FROM = ms('2024-01-01');
const UNTIL = ms('2028-01-01');

function boundaries(group: Group): number[] {
  switch (group) {
    case 'year': return YEARS.map(ms);
    case 'month': return MONTHS.map(ms);
    case 'week': return Array.from({ length: Math.ceil((UNTIL - ms(FIRST_MONDAY)) / (7 * DAY)) + 1 }, (_, i) => ms(FIRST_MONDAY) + i * 7 * DAY);
    case 'day': return Array.from({ length: (UNTIL - FROM) / DAY + 1 }, (_, i) => FROM + i * DAY);
    case 'hour': return Array.from({ length: (UNTIL - FROM) / HOUR + 1 }, (_, i) => FROM + i * HOUR);
  }
}

/** Starts of the periods covering [after, before): the first is the period containing `after`. */
export function periodsCovering(group: Group, after: number, before: number): number[] {
  if (after < FROM || before > UNTIL) throw new Error(`calendar covers 2024–2027 only: ${new Date(after).toISOString()}..${new Date(before).toISOString()}`);
  const all = boundaries(group);
  let first = 0;
  while (first + 1 < all.length && all[first + 1] <= after) first++;
  return all.slice(first).filter((b) => b < before);
}

/** Start of the period after the one starting at `start`. */
export function periodAfter(group: Group, start: number): number {
  const all = boundaries(group);
  const i = all.indexOf(start);
  if (i < 0 || i + 1 >= all.length) throw new Error(`${new Date(start).toISOString()} does not start a ${group} in the calendar`);
  return all[i + 1];
}
