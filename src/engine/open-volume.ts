/** Open-order volume per instrument and side, exact at 1e-16 (every order's margin check reads it). */
import { productParts, productScratch, SCALE_N, type Units } from '../domain/fixed.js';

const UNIT = 100_000_000;
/** Largest open volume per side kept in doubles (units of 1e-8): sums and locks built from it stay below 2^53. */
export const SAFE_SUM = 2 ** 52;
const SAFE_RAW = BigInt(SAFE_SUM) * SCALE_N;

/**
 * Open-order volume per instrument: Σ remaining × price of the account's live buy and sell orders, exact at
 * 1e-16 so it never drifts. Kept as doubles — whole 1e-8 units plus the remainder below one unit — because
 * every order's margin check reads it and bigint arithmetic there was the engine's largest single cost
 * (hand-written for that reason). A side whose sum passes SAFE_SUM units (~45 million USDT of open orders)
 * switches to exact bigints until it falls back below.
 */
export class OpenVolume {
  buyUnits = 0;
  buyFrac = 0;
  sellUnits = 0;
  sellFrac = 0;
  /** The exact sums (1e-16) while a side is too large for the double parts; null otherwise. */
  private big: { buy: bigint; sell: bigint } | null = null;

  constructor(readonly instrument: string) {}

  static fromRaw(instrument: string, buyRaw: bigint, sellRaw: bigint): OpenVolume {
    const v = new OpenVolume(instrument);
    v.setRaw(buyRaw, sellRaw);
    return v;
  }

  /** Σ remaining × price of the live buy orders (1e-16 units). */
  get buyRaw(): bigint {
    return this.big !== null ? this.big.buy : BigInt(this.buyUnits) * SCALE_N + BigInt(this.buyFrac);
  }

  get sellRaw(): bigint {
    return this.big !== null ? this.big.sell : BigInt(this.sellUnits) * SCALE_N + BigInt(this.sellFrac);
  }

  /** Whether the double parts hold the sums (else only buyRaw/sellRaw do). */
  get exact(): boolean {
    return this.big === null;
  }

  /** Adds (sign 1) or removes (sign −1) quantity × price on one side. */
  change(isBid: boolean, quantity: Units, price: Units, sign: 1 | -1): void {
    if (this.big === null && productParts(quantity, price)) {
      let u = (isBid ? this.buyUnits : this.sellUnits) + sign * productScratch.units;
      let f = (isBid ? this.buyFrac : this.sellFrac) + sign * productScratch.frac;
      if (f < 0) { f += UNIT; u -= 1; } else if (f >= UNIT) { f -= UNIT; u += 1; }
      if (u <= SAFE_SUM) {
        if (isBid) {
          this.buyUnits = u;
          this.buyFrac = f;
        } else {
          this.sellUnits = u;
          this.sellFrac = f;
        }
        return;
      }
    }
    const delta = BigInt(quantity) * BigInt(price);
    const raw = sign === 1 ? delta : -delta;
    this.setRaw(isBid ? this.buyRaw + raw : this.buyRaw, isBid ? this.sellRaw : this.sellRaw + raw);
  }

  private setRaw(buyRaw: bigint, sellRaw: bigint): void {
    if (buyRaw >= 0n && sellRaw >= 0n && buyRaw <= SAFE_RAW && sellRaw <= SAFE_RAW) {
      this.big = null;
      this.buyUnits = Number(buyRaw / SCALE_N);
      this.buyFrac = Number(buyRaw % SCALE_N);
      this.sellUnits = Number(sellRaw / SCALE_N);
      this.sellFrac = Number(sellRaw % SCALE_N);
    } else {
      this.big = { buy: buyRaw, sell: sellRaw };
    }
  }
}
