/** Oracle for the history rows' ordinals (row-ordinals.ts): each equals row_number() over the rows. */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { ReadStore } from '../../src/store/index.js';

export async function assertOrdinalsMatchRows(store: ReadStore, label: string): Promise<void> {
  const fills = await sql<Record<string, unknown>>`
    select execution_id, order_id, user_seq, user_inst_seq, user_role_seq, user_inst_role_seq, a, b, c, d from (
      select execution_id, order_id, user_seq, user_inst_seq, user_role_seq, user_inst_role_seq,
        row_number() over (partition by user_id order by created_at, seq, ev) as a,
        row_number() over (partition by user_id, instrument order by created_at, seq, ev) as b,
        row_number() over (partition by user_id, role order by created_at, seq, ev) as c,
        row_number() over (partition by user_id, instrument, role order by created_at, seq, ev) as d
      from fills) r
    where user_seq is null or user_inst_seq is null or user_role_seq is null or user_inst_role_seq is null
      or user_seq <> a or user_inst_seq <> b or user_role_seq <> c or user_inst_role_seq <> d
    limit 3`.execute(store.db);
  assert.deepEqual(fills.rows.map((r) => Object.values(r).map(String).join('|')), [], `fill ranks (${label})`);
  const funding = await sql<Record<string, unknown>>`
    select seq, ev, user_seq, a from (
      select seq, ev, user_seq, row_number() over (partition by user_id order by updated_at, seq, ev) as a from funding_changes) r
    where user_seq is null or user_seq <> a
    limit 3`.execute(store.db);
  assert.deepEqual(funding.rows.map((r) => Object.values(r).map(String).join('|')), [], `collateral movement ranks (${label})`);
}
