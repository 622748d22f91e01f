/**
 * The accounts whose margin may have changed in the command being applied (fills, funding, price ticks),
 * checked by the liquidator before the command ends, in ascending user id.
 *
 * An array deduplicated by a flag on the account, taken in turns through two swapped arrays: most commands
 * queue the two sides of a fill, and a Set cost a spread, a comparator sort and a new hash table (Set.clear)
 * per command. A price tick queues every holder of the
 * instrument: insertion sort is quadratic, so long lists use Array.prototype.sort.
 */
import type { Account } from './account.js';
import { empty } from './scratch.js';

export class RiskQueue {
  private queued: Account[] = [];
  private taken: Account[] = [];

  get size(): number {
    return this.queued.length;
  }

  add(acc: Account): void {
    if (acc.riskQueued === true) return;
    acc.riskQueued = true;
    this.queued.push(acc);
  }

  /**
   * The queued accounts in ascending user id; the queue starts empty again (accounts added while the list is
   * processed are queued for the next turn). The list is valid until the next call.
   */
  take(): readonly Account[] {
    const list = this.queued;
    const next = this.taken;
    empty(next);
    this.queued = next;
    this.taken = list;
    for (let i = 0; i < list.length; i++) list[i].riskQueued = false;
    if (list.length > 16) {
      list.sort((a, b) => a.userId - b.userId);
      return list;
    }
    // Insertion sort for the usual few accounts (a taker and its makers): Array.prototype.sort copies the
    // array into a work area on every call.
    for (let i = 1; i < list.length; i++) {
      const acc = list[i];
      let j = i - 1;
      while (j >= 0 && list[j].userId > acc.userId) {
        list[j + 1] = list[j];
        j--;
      }
      list[j + 1] = acc;
    }
    return list;
  }

  clear(): void {
    const q = this.queued;
    while (q.length !== 0) q.pop()!.riskQueued = false;
  }
}
