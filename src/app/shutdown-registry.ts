/**
 * One shutdown path for the whole process: each builder's stop is registered as it is built, and stopAll()
 * runs them in reverse order, so whatever was built later (and may use what was built before) stops first.
 * A start that fails halfway calls the same stopAll(): exactly what was opened gets closed.
 */
import type pino from 'pino';

/** What every builder returns: the service it built and how to stop it. */
export interface Built<T> {
  service: T;
  stop(): Promise<void> | void;
}

export class ShutdownRegistry {
  private readonly steps: Array<{ name: string; stop: () => Promise<void> | void }> = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: pino.Logger) {}

  /** Registers the builder's stop and hands back its service. */
  add<T>(name: string, built: Built<T>): T {
    if (this.stopping) throw new Error(`cannot register "${name}": shutdown has begun`);
    this.steps.push({ name, stop: () => built.stop() });
    return built.service;
  }

  /** Names in the order they will stop. */
  get order(): string[] {
    return this.steps.map((s) => s.name).reverse();
  }

  /**
   * Stops everything registered, newest first; every step runs even when an earlier one fails. Rejects with
   * the first failure once all steps ran. Idempotent: later calls get the same promise.
   */
  stopAll(): Promise<void> {
    this.stopping ??= this.run();
    return this.stopping;
  }

  private async run(): Promise<void> {
    this.log.info('shutting down');
    const failures: unknown[] = [];
    for (const step of [...this.steps].reverse()) {
      try {
        await step.stop();
      } catch (err) {
        failures.push(err);
        this.log.warn({ err, step: step.name }, 'shutdown step failed');
      }
    }
    this.log.info('stopped');
    if (failures.length > 0) throw failures[0];
  }
}

/** Runs the next step of a builder; if it throws, closes what the builder already opened, then rethrows. */
export async function closingOnFailure<T>(opened: { close(): Promise<void> | void }, next: () => T | Promise<T>): Promise<T> {
  try {
    return await next();
  } catch (err) {
    await Promise.resolve()
      .then(() => opened.close())
      .catch(() => undefined);
    throw err;
  }
}
