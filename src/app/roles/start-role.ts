/** Starts one cluster role for `perpx <role>` (src/app/main.ts) and says what it serves. */
import type pino from 'pino';
import { describeNatsAuth } from '../../journal/nats-connection.js';
import type { ExchangeConfig } from '../config.js';
import type { ClusterRole } from './cluster-config.js';
import { startEngineNode } from './engine-node.js';
import { startGatewayNode } from './gateway-node.js';
import { startProjectorNode } from './projector-node.js';

export interface RunningRole {
  banner: string;
  close(): Promise<void>;
}

export async function startRole(role: ClusterRole, config: ExchangeConfig, log: pino.Logger): Promise<RunningRole> {
  const onFatal = (err: Error) => {
    log.fatal({ err }, `${role} halted; exiting so that it restarts and recovers from the log`);
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    void running?.close().finally(() => process.exit(1));
  };
  let running: RunningRole | undefined;
  const cluster = `cluster ${config.nats.cluster} on ${config.nats.url} with ${describeNatsAuth(config.nats.auth)}`;
  if (role === 'engine') {
    const node = await startEngineNode(config, { logger: log, onFatal });
    const lines = [
      `perpx engine leader (${cluster})`, `  Log          ${node.journal}`, `  Chain id     ${config.chainId}`,
      `  Engine seq   ${node.engine.seq}, instruments: ${node.engine.instrumentConfigs().map((i) => i.id).join(', ') || '(none)'}`,
    ];
    if (node.marketMakers) lines.push(`  Market makers ${node.marketMakers.userIds.length} bots (exchangeIds ${node.marketMakers.userIds.join(', ')}) quoting every tradable instrument`);
    if (node.demoWallet) {
      const w = node.demoWallet;
      lines.push(`  Demo wallet  ${w.address} (exchangeId ${w.exchangeId}), funded with test USDT`, `               private key ${w.privateKey}`);
    }
    running = { banner: lines.join('\n'), close: node.close };
  } else if (role === 'gateway') {
    const node = await startGatewayNode(config, { logger: log, onFatal });
    running = {
      banner: [`perpx gateway (${cluster})`, `  REST API     ${node.url}/api`, `  Auth         ${node.authUrl}/auth`, `  WebSocket    ${node.wsUrl}  channels "${node.channelPrefix}<name>"`,
        `  API docs     ${node.url}/docs`, `  Follower seq ${node.follower.seq}`].join('\n'),
      close: node.close,
    };
  } else {
    const node = await startProjectorNode(config, { logger: log, onFatal });
    running = { banner: `perpx projector (${cluster})\n  Read model   seq ${node.projectedSeq()}`, close: node.close };
  }
  return running;
}
