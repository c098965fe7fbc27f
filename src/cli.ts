import { parseArgs } from 'node:util';
import { findJob, jobRegistry } from '../jobs/index.ts';
import '../commands/index.ts';
import { loadConfig, type LoadedConfig } from './config.ts';
import { ChatopsError, describeError } from './errors.ts';
import { readMaasMaxBodyBytes } from './env.ts';
import { createLogger } from './log.ts';
import { createRedactor } from './redact.ts';
import { exitCodeFor, type Report } from './report.ts';
import { sitesOverview, sitesText } from './sites.ts';
import { reportsText } from './text-render.ts';

export const EXIT = { ok: 0, problems: 1, failed: 2, usage: 64 } as const;

const USAGE = `Usage: maas-chatops <command> [target] [--config FILE] [--json] [--apply]

Processes:
  serve                       Slack receiver, workers and drift schedulers in one process
  bot                         only the Slack receiver
  worker                      only workers and schedulers (run several against one Redis)
  lab                         the demo: simulators, bot and worker, a scripted conversation
Checks (inline, no Slack, no Redis):
  sites                       the configured MAAS regions, sites and clusters
  audit [target] [count]      the latest entries of the audit trail (needs Redis)
  dns-check <cluster>|all     resolver-check <site>|all     mac-diff <site>|all
Repairs (print the plan; --apply executes it under the same guards as Slack):
  fix-macs <site>   fix-dns <cluster>   fix-resolver <site>
Options: --config FILE (default $MAAS_CHATOPS_CONFIG, else ./maas-chatops.yaml), --json, --apply
Exit status: 0 healthy or nothing to do, 1 problems found or a plan, 2 could not check or a step failed, 64 usage or config error
`;

interface CliOptions {
  config?: string;
  json: boolean;
  apply: boolean;
  help: boolean;
}

type Out = { out: (s: string) => void; err: (s: string) => void };

const defaultOut: Out = {
  out: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
};

function parse(argv: string[]): { positionals: string[]; options: CliOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      json: { type: 'boolean', default: false },
      apply: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const options: CliOptions = { json: values.json ?? false, apply: values.apply ?? false, help: values.help ?? false };
  if (values.config) options.config = values.config;
  return { positionals, options };
}

export async function main(argv: string[], io: Out = defaultOut, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.err(`${describeError(err)}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const [command, ...rest] = parsed.positionals;
  if (!command || parsed.options.help || command === 'help') {
    io.out(USAGE);
    return command || parsed.options.help ? EXIT.ok : EXIT.usage;
  }
  try {
    return await runCommand(command, rest, parsed.options, io, env);
  } catch (err) {
    io.err(`maas-chatops ${command}: ${describeError(err)}`);
    if (err instanceof ChatopsError && ['CONFIG_INVALID', 'CONFIG_MISSING', 'USAGE', 'UNKNOWN_TARGET', 'SECRET_UNRESOLVED'].includes(err.code)) {
      return EXIT.usage;
    }
    return EXIT.failed;
  }
}

function load(options: CliOptions, env: NodeJS.ProcessEnv, io: Out): LoadedConfig {
  const loaded = loadConfig({ ...(options.config ? { path: options.config } : {}), env });
  for (const w of loaded.warnings) io.err(`warning: ${w}`);
  return loaded;
}

async function runCommand(command: string, args: string[], options: CliOptions, io: Out, env: NodeJS.ProcessEnv): Promise<number> {
  if (command === 'lab') {
    const { runLab } = await import('./lab/run-lab.ts');
    return runLab({ env, out: io.out, err: io.err });
  }
  if (command === 'serve' || command === 'bot' || command === 'worker') {
    const { runRole } = await import('./main.ts');
    return runRole(command, { loaded: load(options, env, io), env });
  }
  if (command === 'audit') {
    const { runAuditCli } = await import('./audit/audit-cli.ts');
    return runAuditCli({ loaded: load(options, env, io), env, args, json: options.json, out: io.out, err: io.err });
  }
  if (command === 'sites') {
    const { config } = load(options, env, io);
    const overview = sitesOverview(config);
    io.out(options.json ? JSON.stringify(overview, null, 2) : sitesText(overview));
    return EXIT.ok;
  }
  const job = findJob(command);
  if (!job) {
    io.err(`unknown command "${command}"; known: serve, bot, worker, lab, sites, ${[...jobRegistry.keys()].join(', ')}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const target = args[0];
  if (!target || args.length > 1) {
    io.err(`usage: maas-chatops ${command} <target>|all [--json]${command.startsWith('fix-') ? ' [--apply]' : ''}`);
    return EXIT.usage;
  }
  return runJobInline(command, target, options, io, env);
}

async function runJobInline(command: string, target: string, options: CliOptions, io: Out, env: NodeJS.ProcessEnv): Promise<number> {
  const loaded = load(options, env, io);
  const redact = createRedactor(loaded.secrets);
  const log = createLogger({ redact, level: env.LOG_LEVEL ?? 'warn' });
  const { createRealAdapters } = await import('./real-adapters.ts');
  const adapters = createRealAdapters(loaded.config, { maasMaxBodyBytes: readMaasMaxBodyBytes(env) });
  const job = findJob(command);
  if (!job) return EXIT.usage;
  const data = { target, requestedBy: `terminal:${env.USER ?? 'unknown'}`, apply: options.apply, interactive: true };
  const reports: Report[] = await job.run({ config: loaded.config, adapters, log }, data);
  const output = options.json ? JSON.stringify(reports.length === 1 && target !== 'all' ? reports[0] : reports, null, 2) : reportsText(reports);
  io.out(redact(output));
  return exitCodeFor(reports);
}
