// Public surface of the real-time module.
export { createRealtimeServer, type RealtimeServer, type RealtimeServerOptions } from './server.js';
export type {
  Authorize, Authorization, Broker, ChannelPublisher, CheckConnectToken, ClientInfo, HistoryPolicy, HistoryPolicyFor, HistoryOptions, HistoryResult, Logger, Publication,
  PublishOptions, RealtimeStats, StreamPosition,
} from './ports.js';
export { InMemoryBroker, type InMemoryBrokerOptions } from './memory-broker.js';
export { NatsBroker, type NatsBrokerOptions } from './nats-broker.js';
export { CoalescingPublisher, type CoalescingOptions } from './coalescer.js';
export { Heartbeat } from './heartbeat.js';
export { ErrorCode, DisconnectCode, UnsubscribeCode, clientReconnects } from './codes.js';
export type { Rate, RealtimeLimits } from './limits.js';
