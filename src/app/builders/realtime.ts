/**
 * The websocket side: the Centrifugo-protocol server with its channel policy, and the channels that turn
 * engine events into publications through it. The server is attached to the gateway's HTTP servers later
 * (attach); until then, and in a process without a gateway, it only publishes.
 */
import type http from 'node:http';
import type pino from 'pino';
import { clientIp, proxyTrust } from '../../api/client-ip.js';
import type { AuthService } from '../../auth/types.js';
import type { EngineQueries } from '../../engine/api.js';
import type { InstrumentStats } from '../../records/index.js';
import { clusterNames } from '../../journal/jetstream-names.js';
import { connectNats } from '../../journal/nats-connection.js';
import { ChannelPolicy, RECOVERABLE_HISTORY } from '../../realtime/channel-policy.js';
import { ExchangeChannels } from '../../realtime/channels.js';
import { createRealtimeServer, DisconnectCode, NatsBroker, type Broker, type RealtimeStats } from '../../realtime/index.js';
import type { CheckConnectToken } from '../../realtime/ports.js';
import type { EventHandler } from '../../sequencer/ports.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export const WS_PATH = '/connection/websocket';

/** What a process that serves clients tells them: REST, auth, websocket and docs URLs, channel prefix. */
export function clientUrls(gateway: { url: string; authUrl: string }, channelEnv: string) {
  return {
    url: gateway.url,
    authUrl: gateway.authUrl,
    wsUrl: `${gateway.url.replace(/^http/, 'ws')}${WS_PATH}`,
    channelPrefix: `${channelEnv}:`,
    docsUrl: `${gateway.url}/docs`,
  };
}

export interface Realtime {
  /** Event-bus subscriber. */
  onBatch: EventHandler;
  /** Serves websocket upgrades on this HTTP server. */
  attach(server: http.Server): void;
  stats: RealtimeStats;
  /** Ends the subscriptions authorized with a login session; returns how many ended. */
  endSession(sessionId: string): number;
}

type RealtimeConfig = Pick<ExchangeConfig,
  'channelEnv' | 'bookPublishIntervalMs' | 'heartbeatMs' | 'wsWriteDelayMs' | 'wsLimits' | 'trustProxy' | 'accessTokenTtlSec' | 'realtimeBroker' | 'nats'>;

/** A connect token may be of either kind: valid if one check says so, else expired (109: renew) if one says that. */
function eitherConnectToken(...checks: CheckConnectToken[]): CheckConnectToken {
  return async (token) => {
    const verdicts = await Promise.all(checks.map((check) => check(token)));
    return verdicts.includes('valid') ? 'valid' : verdicts.includes('expired') ? 'expired' : 'invalid';
  };
}

/**
 * REALTIME_BROKER=nats: the JetStream broker on its own connection; memory: none (the server makes its own).
 * Only a publisher (`publishing`) creates or changes the stream: a gateway's NATS user may not.
 */
async function openSharedBroker(config: RealtimeConfig, publishing: boolean): Promise<{ broker: Broker; close(): Promise<void> } | undefined> {
  if (config.realtimeBroker !== 'nats') return undefined;
  const nc = await connectNats(config.nats.url, 'perpx realtime', config.nats.auth);
  const broker = await closingOnFailure({ close: () => nc.close() }, () => NatsBroker.open({
    nc,
    stream: clusterNames(config.nats.cluster).realtimeStream,
    subjectPrefix: clusterNames(config.nats.cluster).realtimeSubjectPrefix,
    maxHistorySize: RECOVERABLE_HISTORY.size,
    replicas: config.nats.streamReplicas,
    manageStream: publishing,
  }));
  return {
    broker,
    close: async () => {
      await broker.close();
      await nc.drain().catch(() => undefined);
    },
  };
}

export async function buildRealtime(
  config: RealtimeConfig,
  deps: {
    engine: EngineQueries;
    auth: Pick<AuthService, 'verifyAccessToken'> & Required<Pick<AuthService, 'onRevoked'>>;
    /** Connect tokens: market-data tokens (GET /api/dx-feed/auth); access tokens are checked besides. */
    checkConnectToken: CheckConnectToken;
    /** Rolling 24 h statistics for the instruments channel (synchronous). */
    instrumentStats: (instrument: string) => InstrumentStats | undefined;
    /**
     * Whether this process turns engine events into publications (default true). A cluster gateway does not:
     * the engine leader publishes once into the shared broker, so offsets and epochs agree on every gateway.
     */
    publishChannels?: boolean;
    log: pino.Logger;
  },
): Promise<Built<Realtime>> {
  const { engine, auth, log } = deps;
  const shared = await openSharedBroker(config, deps.publishChannels !== false);
  const policy = new ChannelPolicy({ env: config.channelEnv, engine, auth });
  const trustProxy = proxyTrust(config.trustProxy);
  const server = createRealtimeServer({
    path: WS_PATH,
    broker: shared?.broker,
    authorize: policy.authorize,
    checkConnectToken: eitherConnectToken(deps.checkConnectToken, policy.checkConnectToken),
    historyFor: policy.historyFor,
    writeDelayMs: config.wsWriteDelayMs,
    logger: log.child({ module: 'realtime' }),
    limits: config.wsLimits,
    // Connection caps and rates count the same client as the HTTP budgets (TRUST_PROXY, IPv6 by /64).
    clientIpOf: (req) => clientIp(req, trustProxy),
    // An ended session's access tokens stay refused for as long as they could be valid.
    endedSessionTtlMs: config.accessTokenTtlSec * 1000,
  });
  const channels = deps.publishChannels === false ? undefined : new ExchangeChannels({
    env: config.channelEnv,
    engine,
    publisher: server,
    instrumentStats: deps.instrumentStats,
    bookIntervalMs: config.bookPublishIntervalMs,
    heartbeatMs: config.heartbeatMs,
    onError: (err, channel) => log.warn({ err, channel }, 'real-time publish failed'),
  });
  // A revoked session (logout, refresh-token reuse) loses its private subscriptions at once.
  const stopEndingSessions = auth.onRevoked(({ sessionId }) => void server.endSession(sessionId));
  channels?.start();
  return {
    service: {
      onBatch: channels?.onBatch ?? (() => undefined),
      attach: (s) => server.attach(s),
      stats: server.stats,
      endSession: (sessionId) => server.endSession(sessionId),
    },
    stop: async () => {
      // Last order books out, then every client is disconnected with a code that tells it to reconnect.
      channels?.stop();
      stopEndingSessions();
      await server.close(`shutdown (${DisconnectCode.shutdown})`);
      await shared?.close();
    },
  };
}
