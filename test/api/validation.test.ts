import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { flatConverter } from '../../src/api/validation.js';
import { StringEnum } from '../../src/records/common.js';
import { Instrument, Limit, Offset, OneOrMany } from '../../src/api/schemas.js';

const generic = (s: TSchema, data: unknown) => Value.Convert(s, Value.Default(s, Value.Clone(data)));

const schemas: Record<string, TSchema> = {
  depth: Type.Object({
    maxLevel: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
    roundPrice: Type.Optional(StringEnum(['0.1', '1', '10'] as const, { default: '0.1' })),
    marketLevel: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
  }),
  params: Type.Object({ instrument: Instrument }),
  page: Type.Object({ limit: Limit, offset: Offset, note: Type.Optional(Type.String()), ratio: Type.Optional(Type.Number()) }),
};

const inputs: Array<Record<string, unknown>> = [
  {}, { maxLevel: '20' }, { maxLevel: 'abc' }, { maxLevel: '1.5' }, { maxLevel: ['1', '2'] }, { maxLevel: '' }, { maxLevel: '0x10' },
  { maxLevel: ' 7 ' }, { maxLevel: '1e3' }, { maxLevel: '-0' }, { maxLevel: 'true' }, { maxLevel: 'false' }, { maxLevel: '9007199254740993' },
  { roundPrice: '1', extra: 'y' }, { roundPrice: ['1', '10'] }, { marketLevel: '1', maxLevel: '5' }, { instrument: 'BTCUSDT' },
  { instrument: '' }, { limit: 'true' }, { limit: '10', offset: '3' }, { ratio: '1e3' }, { ratio: 'Infinity' }, { ratio: 'NaN' },
  { note: 'x', limit: ['1'] }, { offset: '   ' },
];

test('the flat path/query converter gives what TypeBox Clone + Default + Convert give', () => {
  for (const [name, schema] of Object.entries(schemas)) {
    const flat = flatConverter(schema);
    assert.ok(flat, `${name} is a flat schema`);
    for (const input of inputs) {
      for (const data of [input, Object.assign(Object.create(null) as object, input)]) {
        const before = JSON.stringify(Object.entries(data));
        assert.deepEqual(flat(data), generic(schema, data), `${name} ${JSON.stringify(input)}`);
        assert.equal(JSON.stringify(Object.entries(data)), before, 'the input is not changed');
      }
    }
  }
});

test('schemas with unions, arrays or nested objects are left to the generic path', () => {
  assert.equal(flatConverter(Type.Object({ status: Type.Optional(OneOrMany(Type.String())) })), null);
  assert.equal(flatConverter(Type.Object({ inner: Type.Object({ a: Type.String() }) })), null);
  assert.equal(flatConverter(Type.Array(Type.String())), null);
});
