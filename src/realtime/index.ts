// Public surface of the real-time module.
export { createRealtimeServer, type RealtimeServer, type RealtimeServerOptions } from './server.js';
export type { Broker, HistoryPolicy, HistoryOptions, HistoryResult, Publication, PublishOptions, StreamPosition } from './broker.js';
export { InMemoryBroker, type InMemoryBrokerOptions } from './memory-broker.js';
export { CoalescingPublisher, type CoalescingOptions } from './coalescer.js';
export { Heartbeat } from './heartbeat.js';
export { ErrorCode, DisconnectCode, UnsubscribeCode, clientReconnects } from './codes.js';
export type { Authorize, Authorization, ClientInfo, HistoryPolicyFor, Logger, RealtimeStats } from './types.js';
export type { Rate, RealtimeLimits } from './limits.js';
