/**
 * The live orders of one account, in listing order: a doubly linked list threaded through the orders
 * themselves (OrderState.accountPrev/accountNext). Hand-written instead of a Set<OrderState>: every
 * placement, fill-out and cancel adds or removes one, and a Set entry costs a hash-table slot (and its
 * share of the table's growth) per resting order where two pointers on the order do; `add`, `delete` and
 * `has` are pointer updates.
 */
export interface AccountListed {
  accountPrev: AccountListed | null;
  accountNext: AccountListed | null;
}

export class AccountOrders<T extends AccountListed> {
  private head: T | null = null;
  private tail: T | null = null;
  size = 0;

  /** Whether `o` is in this list (an order is only ever listed in its own account's). */
  has(o: T): boolean {
    return o.accountPrev !== null || this.head === o;
  }

  /** Appends `o` (no-op when already listed). */
  add(o: T): void {
    if (this.has(o)) return;
    o.accountPrev = this.tail;
    o.accountNext = null;
    if (this.tail !== null) this.tail.accountNext = o;
    else this.head = o;
    this.tail = o;
    this.size++;
  }

  delete(o: T): boolean {
    if (!this.has(o)) return false;
    const prev = o.accountPrev as T | null;
    const next = o.accountNext as T | null;
    if (prev !== null) prev.accountNext = next;
    else this.head = next;
    if (next !== null) next.accountPrev = prev;
    else this.tail = prev;
    o.accountPrev = null;
    o.accountNext = null;
    this.size--;
    return true;
  }

  /** The listed orders, oldest listing first (a copy: callers may cancel while walking it). */
  values(): T[] {
    const out: T[] = [];
    for (let o = this.head; o !== null; o = o.accountNext as T | null) out.push(o);
    return out;
  }
}
