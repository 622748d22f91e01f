// The publish function the coalescer and heartbeat write through (RealtimeServer.publish).
export type Publish = (channel: string, data: unknown) => unknown;
