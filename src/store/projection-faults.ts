/**
 * Fault injection for the read-model projector (tests only; production never passes one). The projector
 * checks it inside each project() transaction after its rows are written, so an injected failure rolls a
 * real transaction back, as a full disk would. The counters live in shared memory: the projector worker
 * thread gets the same buffer (workerData) and sees a test arm or clear a fault at once.
 */

const REMAINING = 0;
const INJECTED = 1;

export class ProjectionFaultError extends Error {
  override name = 'ProjectionFaultError';
}

export class ProjectionFaults {
  private readonly cells: Int32Array;

  /** `shared`: the buffer of another instance (how the worker thread attaches to the test's faults). */
  constructor(readonly shared: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.cells = new Int32Array(shared);
  }

  /** The next `n` project() calls fail. */
  failNext(n: number): void {
    Atomics.store(this.cells, REMAINING, n);
  }

  /** Every project() call fails until clear(). */
  failAlways(): void {
    Atomics.store(this.cells, REMAINING, -1);
  }

  clear(): void {
    Atomics.store(this.cells, REMAINING, 0);
  }

  /** Failures injected so far. */
  get injected(): number {
    return Atomics.load(this.cells, INJECTED);
  }

  /** Called by the projector once per call: throws when a failure is due. */
  check(): void {
    for (;;) {
      const left = Atomics.load(this.cells, REMAINING);
      if (left === 0) return;
      if (left > 0 && Atomics.compareExchange(this.cells, REMAINING, left, left - 1) !== left) continue;
      Atomics.add(this.cells, INJECTED, 1);
      throw new ProjectionFaultError('injected read-model fault');
    }
  }
}
