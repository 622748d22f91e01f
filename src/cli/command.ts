/**
 * The CLI's command model: each command declares its positionals and options once; parsing (node:util
 * parseArgs, strict) and `--help` text both come from that declaration.
 */
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  short?: string;
  multiple?: boolean;
  default?: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Positional argument names in order; a trailing `?` marks an optional one. */
  args?: string[];
  options?: Record<string, OptionSpec>;
  /** Extra help paragraphs. */
  details?: string;
  run(input: CliInput): Promise<void>;
}

export interface CliInput {
  args: Record<string, string | undefined>;
  options: Record<string, string | boolean | string[] | undefined>;
  global: GlobalOptions;
}

export interface GlobalOptions {
  url: string;
  dataDir: string;
  token: string | undefined;
  json: boolean;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', description: 'Exchange base URL (env PERPX_URL; default http://127.0.0.1:$PORT or :8080)' },
  'data-dir': { type: 'string', description: 'Data directory: operator token, journal, snapshots (env DATA_DIR; default ./data)' },
  token: { type: 'string', description: 'Operator token (env PERPX_OPERATOR_TOKEN; default: read from <data-dir>/operator-token)' },
  json: { type: 'boolean', description: 'Print machine-readable JSON' },
  help: { type: 'boolean', short: 'h', description: 'Show help' },
};

function optionLines(options: Record<string, OptionSpec>): string[] {
  return Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ' <value>' : ''}`;
    const def = o.default !== undefined ? ` (default ${o.default})` : '';
    return `  ${flag.padEnd(30)} ${o.description}${def}${o.multiple ? ' (repeatable)' : ''}`;
  });
}

export function commandHelp(bin: string, c: CommandSpec): string {
  const args = (c.args ?? []).map((a) => (a.endsWith('?') ? `[${a.slice(0, -1)}]` : `<${a}>`)).join(' ');
  const lines = [`Usage: ${bin} ${c.name}${args ? ' ' + args : ''} [options]`, '', c.summary];
  if (c.details) lines.push('', c.details);
  if (c.options && Object.keys(c.options).length > 0) lines.push('', 'Options:', ...optionLines(c.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  return lines.join('\n');
}

export function mainHelp(bin: string, commands: CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    `Usage: ${bin} <command> [arguments] [options]`,
    '',
    'perpx operator CLI. Commands talk to a running exchange over /api/admin (operator token from the data',
    'directory), except verify-journal, which works offline on the data directory.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    `Run \`${bin} <command> --help\` for a command's arguments and options.`,
  ].join('\n');
}

/** Parses argv for one command. Throws UsageError with a readable message. */
export function parseCommand(c: CommandSpec, argv: string[], env: NodeJS.ProcessEnv): { input: CliInput; help: boolean } {
  const specs = { ...GLOBAL_OPTIONS, ...(c.options ?? {}) };
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [k, o] of Object.entries(specs)) options[k] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  for (const [k, o] of Object.entries(specs)) if (values[k] === undefined && o.default !== undefined) values[k] = o.default;
  const help = values.help === true;
  const names = c.args ?? [];
  const args: Record<string, string | undefined> = {};
  if (!help) {
    const required = names.filter((n) => !n.endsWith('?')).length;
    if (parsed.positionals.length < required || parsed.positionals.length > names.length) {
      throw new UsageError(`${c.name}: expected ${names.join(' ') || 'no arguments'}, got ${parsed.positionals.length} argument(s)`);
    }
  }
  names.forEach((n, i) => (args[n.replace(/\?$/, '')] = parsed.positionals[i]));
  const fromEnv = (name: string) => (env[name] && env[name]!.trim() !== '' ? env[name]!.trim() : undefined);
  const port = fromEnv('PORT') && env.PORT !== '0' ? fromEnv('PORT') : '8080';
  const global: GlobalOptions = {
    url: ((values.url as string | undefined) ?? fromEnv('PERPX_URL') ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    dataDir: (values['data-dir'] as string | undefined) ?? fromEnv('DATA_DIR') ?? './data',
    token: (values.token as string | undefined) ?? fromEnv('PERPX_OPERATOR_TOKEN'),
    json: values.json === true,
  };
  return { input: { args, options: values, global }, help };
}
