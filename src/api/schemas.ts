/** Request schema pieces shared by the route plugins. Bodies are closed objects (unknown field → 400). */
import { Type, type TProperties } from '@sinclair/typebox';
import { SIDES, TPSL_TYPES } from '../domain/enums.js';
import { StringEnum } from '../records/common.js';

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 500;

/** Closed request body object. */
export const Body = <T extends TProperties>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

/** Amount or price: decimal string or JSON number (rounded half-up to 8 dp by the gateway). */
export const Decimal = Type.Union([
  Type.String({ pattern: '^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?$', maxLength: 64 }),
  Type.Number(),
], { description: 'decimal as string or number; rounded half-up to 8 decimal places' });

const V2 = '[0-9]{5}:[0-9A-Fa-f]{26}';
const V1 = '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}';
export const OrderIdV2 = Type.String({ pattern: `^${V2}$`, description: 'version 2 order id: DDDDD:<26 hex>; hex starting with ffffffffff is reserved for orders the exchange creates' });
export const OrderIdAny = Type.String({ pattern: `^(${V2}|${V1})$`, description: 'version 1 (UUID) or version 2 order id' });

export const SideSchema = StringEnum(SIDES);
export const Instrument = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' });
export const Signature = Type.String({ minLength: 1, maxLength: 200, description: '65-byte EIP-712 signature, 0x-hex' });
export const ChainId = Type.Union([Type.String({ pattern: '^[0-9]{1,20}$' }), Type.Integer({ minimum: 0 })], {
  description: "must equal the server's chain id",
});
export const Leverage = Type.Integer({ minimum: 1, maximum: 300 });
export const Smp = Body({ smp: Type.Boolean(), smpId: Type.String({ maxLength: 128 }) }, 'self-match prevention');
export const PostOnly = Type.String({ maxLength: 16, description: '"yes" = post-only' });

export const TpSlInputSchema = Body({
  type: StringEnum(TPSL_TYPES),
  side: SideSchema,
  quantity: Decimal,
  price: Decimal,
});

/** Query values that may repeat (`?status=A&status=B`). */
export const OneOrMany = <T extends ReturnType<typeof Type.String> | ReturnType<typeof StringEnum>>(item: T) =>
  Type.Union([item, Type.Array(item, { maxItems: 100 })]);

export const Limit = Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: PAGE_DEFAULT });
export const Offset = Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 });
/**
 * Time bound in a query: ISO 8601 or epoch ms (anything Date.parse reads). Long enough for a JavaScript Date
 * put in a query as is — `String(date)`, ~62 characters, which the public client sends for GET /api/transfer.
 */
export const TimeParam = Type.String({ maxLength: 100, description: 'ISO 8601 time or epoch milliseconds' });
export const YesFlag = Type.String({ maxLength: 8, description: '"yes" to enable' });

export const InstrumentParams = Type.Object({ instrument: Instrument });
export const OrderIdParams = Type.Object({ orderId: OrderIdAny });

export function many<T>(v: T | T[] | undefined): T[] | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v : [v];
}
