// The one shutdown path: stops run newest first, every one runs even when another fails, exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ShutdownRegistry } from '../../src/app/shutdown-registry.js';

const silent = pino({ level: 'silent' });

test('stops in reverse order of registration, once, and hands back each service', async () => {
  const registry = new ShutdownRegistry(silent);
  const stopped: string[] = [];
  const built = (name: string) => ({ service: name.toUpperCase(), stop: async () => void stopped.push(name) });
  assert.equal(registry.add('journal', built('journal')), 'JOURNAL');
  registry.add('sequencer', built('sequencer'));
  registry.add('http', built('http'));
  assert.deepEqual(registry.order, ['http', 'sequencer', 'journal']);
  const first = registry.stopAll();
  assert.equal(registry.stopAll(), first, 'the same stop for every caller');
  await first;
  assert.deepEqual(stopped, ['http', 'sequencer', 'journal']);
  await registry.stopAll();
  assert.deepEqual(stopped, ['http', 'sequencer', 'journal'], 'nothing stops twice');
  assert.throws(() => registry.add('late', built('late')), /shutdown has begun/);
});

test('a failing step does not keep the others from stopping; the first failure is reported', async () => {
  const registry = new ShutdownRegistry(silent);
  const stopped: string[] = [];
  registry.add('storage', { service: undefined, stop: () => void stopped.push('storage') });
  registry.add('a', { service: undefined, stop: async () => { throw new Error('a failed'); } });
  registry.add('b', { service: undefined, stop: () => { throw new Error('b failed'); } });
  await assert.rejects(registry.stopAll(), /b failed/);
  assert.deepEqual(stopped, ['storage']);
});
