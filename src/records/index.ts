/** Wire records: one TypeBox schema + one mapper per shape, shared by REST and the real-time channels. */
export * from './common.js';
export * from './order.js';
export * from './tpsl.js';
export * from './fill.js';
export * from './position.js';
export * from './funds.js';
export * from './market.js';
export * from './user.js';
