/**
 * perpx operator CLI: `npm run cli -- <command> …` or `npx perpx <command> …`. Every command has --help.
 * Exit codes: 0 ok, 1 failure (server refusal, verification mismatch), 2 usage error.
 */
import { AdminApiError } from './admin-client.js';
import { UsageError, commandHelp, mainHelp, parseCommand, type CommandSpec } from './command.js';
import { addInstrumentCommand, indexPriceCommand, instrumentsCommand, matcherCommand, tradingCommand } from './commands/market.js';
import { clusterCommand } from './commands/cluster.js';
import { oauthRegisterCommand } from './commands/oauth.js';
import { snapshotCommand, statusCommand } from './commands/system.js';
import { depositCommand, exportHistoryCommand, grantRoleCommand } from './commands/users.js';
import { VerificationFailed, verifyJournalCommand } from './commands/verify-journal.js';

const BIN = 'perpx';

export const COMMANDS: CommandSpec[] = [
  statusCommand,
  clusterCommand,
  instrumentsCommand,
  addInstrumentCommand,
  matcherCommand,
  tradingCommand,
  indexPriceCommand,
  depositCommand,
  grantRoleCommand,
  oauthRegisterCommand,
  exportHistoryCommand,
  snapshotCommand,
  verifyJournalCommand,
];

export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(mainHelp(BIN, COMMANDS) + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n\n${mainHelp(BIN, COMMANDS)}\n`);
    return 2;
  }
  try {
    const { input, help } = parseCommand(command, rest, env);
    if (help) {
      process.stdout.write(commandHelp(BIN, command) + '\n');
      return 0;
    }
    await command.run(input);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${commandHelp(BIN, command)}\n`);
      return 2;
    }
    if (err instanceof AdminApiError) {
      process.stderr.write(`error: ${err.code}: ${err.message}\n`);
      return 1;
    }
    if (err instanceof VerificationFailed) return 1;
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
