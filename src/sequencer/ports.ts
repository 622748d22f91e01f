/**
 * The sequencer's ports: the event broker its batches go out on (only the transport, publish + subscribe, so a
 * NATS JetStream broker can replace the in-process one without the sequencer or the subscribers changing), and
 * the snapshot replica that takes snapshots off the event loop.
 */
import type { EventBatch } from '../engine/commands.js';
import type { ReplicaSnapshotResult } from './snapshot-replica-protocol.js';

export type EventHandler = (batch: EventBatch) => void | Promise<void>;

export interface SubscribeOptions {
  /** Batches a subscriber may have queued (async handler still busy) before it is detached. */
  maxQueue?: number;
  /** Called once if the subscriber is detached for lagging; it then resumes from the journal itself. */
  onOverflow?: (lastDeliveredSeq: number) => void;
}

export interface Subscription {
  readonly name: string;
  unsubscribe(): void;
}

export interface EventBroker {
  publish(batch: EventBatch): void;
  subscribe(name: string, handler: EventHandler, options?: SubscribeOptions): Subscription;
  /** Resolves when every queued batch has been handled (for graceful stop and tests). */
  drain(): Promise<void>;
}

/** Takes the snapshot of the engine state at a seq the journal already holds durably. */
export interface SnapshotReplica {
  /** Resolves once the snapshot of the state after command `seq` is stored. */
  snapshotAt(seq: number, ts: number): Promise<ReplicaSnapshotResult>;
  close(): Promise<void>;
}
