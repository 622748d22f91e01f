/** A non-negative integer benchmark setting from the environment (`1_000_000` style allowed), or `def`. */
export function envInt(name: string, def: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}
