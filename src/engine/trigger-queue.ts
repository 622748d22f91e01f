/**
 * Price triggers waiting for the mark: which of them a new mark price has crossed, in O(log n) per trigger
 * instead of a scan of all of them on every price tick.
 *
 * Two binary heaps: RISING triggers fire when mark ≥ price (a min-heap: the lowest price is the next to
 * fire), FALLING triggers when mark ≤ price (a max-heap). `takeDue(mark)` pops every crossed trigger and
 * returns them in the order they were added (their `seq`), which is the order the engine fired them in when
 * it scanned its insertion-ordered sets: the same commands still give the same events.
 *
 * Removal is lazy (the entry is marked dead and skipped when it reaches the top); the heaps are rebuilt
 * without their dead entries once those outnumber the live ones, so memory stays O(live) and each removal
 * costs O(1) amortized. Hand-written: a generic priority-queue package would still need the lazy deletion,
 * the two directions and the seq ordering wrapped around it.
 */
import type { Units } from '../domain/fixed.js';

interface Entry<T> {
  readonly item: T;
  readonly price: Units;
  readonly seq: number;
  readonly rising: boolean;
  dead: boolean;
}

/** A trigger as the queue holds it (invariant checks and tests). */
export interface TriggerKey {
  price: Units;
  rising: boolean;
  seq: number;
}

/** Rebuild only past this many dead entries (small queues are not worth rebuilding). */
const MIN_DEAD_TO_COMPACT = 64;

export class TriggerQueue<T> {
  /** Min-heap by price (ties: lower seq first) of triggers that fire at mark ≥ price. */
  private rising: Entry<T>[] = [];
  /** Max-heap by price (ties: lower seq first) of triggers that fire at mark ≤ price. */
  private falling: Entry<T>[] = [];
  private readonly live = new Map<T, Entry<T>>();
  private dead = 0;

  get size(): number {
    return this.live.size;
  }

  /** Adds (or moves) `item`'s trigger; `seq` orders it among the triggers due at the same tick. */
  set(item: T, price: Units, rising: boolean, seq: number): void {
    this.remove(item);
    const e: Entry<T> = { item, price, seq, rising, dead: false };
    this.live.set(item, e);
    if (rising) pushUp(this.rising, e, risingFirst);
    else pushUp(this.falling, e, fallingFirst);
  }

  /** Takes `item`'s trigger out, if it has one. */
  remove(item: T): void {
    const e = this.live.get(item);
    if (e === undefined) return;
    this.live.delete(item);
    e.dead = true;
    if (++this.dead > MIN_DEAD_TO_COMPACT && this.dead > this.live.size) this.compact();
  }

  /** Takes out every trigger that `mark` has crossed and returns their items in seq order. */
  takeDue(mark: Units): T[] {
    if (this.live.size === 0) return []; // dead entries left behind are dropped by a later pop or compact
    const due: Entry<T>[] = [];
    this.popWhile(this.rising, risingFirst, (e) => e.price <= mark, due);
    this.popWhile(this.falling, fallingFirst, (e) => e.price >= mark, due);
    if (due.length > 1) due.sort((a, b) => a.seq - b.seq);
    const items = new Array<T>(due.length);
    for (let i = 0; i < due.length; i++) {
      this.live.delete(due[i].item);
      items[i] = due[i].item;
    }
    return items;
  }

  /** `item`'s trigger, if it has one. */
  keyOf(item: T): TriggerKey | undefined {
    const e = this.live.get(item);
    return e === undefined ? undefined : { price: e.price, rising: e.rising, seq: e.seq };
  }

  private popWhile(heap: Entry<T>[], first: Before<T>, crossed: (e: Entry<T>) => boolean, out: Entry<T>[]): void {
    while (heap.length > 0) {
      const top = heap[0];
      if (top.dead) {
        popTop(heap, first);
        this.dead--;
        continue;
      }
      if (!crossed(top)) return;
      popTop(heap, first);
      out.push(top);
    }
  }

  private compact(): void {
    this.rising = heapify(this.rising.filter((e) => !e.dead), risingFirst);
    this.falling = heapify(this.falling.filter((e) => !e.dead), fallingFirst);
    this.dead = 0;
  }
}

type Before<T> = (a: Entry<T>, b: Entry<T>) => boolean;

function risingFirst<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.price < b.price || (a.price === b.price && a.seq < b.seq);
}

function fallingFirst<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.price > b.price || (a.price === b.price && a.seq < b.seq);
}

function pushUp<T>(heap: Entry<T>[], e: Entry<T>, first: Before<T>): void {
  let i = heap.length;
  heap.push(e);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!first(e, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = e;
}

function popTop<T>(heap: Entry<T>[], first: Before<T>): void {
  const last = heap.pop()!;
  if (heap.length > 0) siftDown(heap, 0, last, first);
}

function siftDown<T>(heap: Entry<T>[], i: number, e: Entry<T>, first: Before<T>): void {
  const n = heap.length;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && first(heap[child + 1], heap[child])) child++;
    if (!first(heap[child], e)) break;
    heap[i] = heap[child];
    i = child;
  }
  heap[i] = e;
}

function heapify<T>(heap: Entry<T>[], first: Before<T>): Entry<T>[] {
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, heap[i], first);
  return heap;
}
