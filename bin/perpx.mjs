#!/usr/bin/env node
// `perpx start`: the exchange (src/app/main.ts) in a child node with the flags `npm start` uses; SIGTERM, SIGINT
// and SIGHUP are passed to it, so a supervisor's stop is a graceful stop, and perpx exits with its status.
// Under `npx perpx start` npm runs us through `sh -c`, which dies of the SIGTERM npm forwards without passing it
// on: there the parent's death is the stop request (docs/operations.md, "Which entry a supervisor starts").
// `perpx engine|gateway|projector`: one role of a cluster, started the same way (docs/cluster.md).
// `perpx <command>`: the operator CLI, through tsx's loader (no build step).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

// Keep in step with the "start" script of package.json (measurements: docs/performance.md, "Node flags").
const NODE_FLAGS = ['--max-semi-space-size=256', '--no-allocation-site-pretenuring'];

const PROCESS_ROLES = ['start', 'engine', 'gateway', 'projector'];

if (PROCESS_ROLES.includes(process.argv[2])) {
  const main = fileURLToPath(new URL('../src/app/main.ts', import.meta.url));
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', main, ...process.argv.slice(2)], {
    stdio: 'inherit',
    cwd: process.cwd(),
  });
  const forward = (signal) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, forward(signal));
  if (process.env.npm_command === 'exec') {
    const parent = process.ppid;
    const orphaned = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(orphaned);
      forward('SIGTERM')();
    }, 200);
    orphaned.unref();
  }
  child.on('error', (err) => {
    console.error(`perpx start: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    // Killed by a signal it did not handle: report it the shell's way (128 + signal number).
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
  });
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
