import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { findJob, jobRegistry } from '../jobs/index.ts';
import '../commands/index.ts';
import { loadConfig, secretValues, type LoadedConfig } from './core/config.ts';
import { describeError, isConfigOrUsageError } from './core/errors.ts';
import { CHECKS, FIX_COMMANDS } from './features/registry.ts';
import { readMaasMaxBodyBytes } from './core/env.ts';
import { createLogger } from './core/log.ts';
import { packageVersion } from './core/package-version.ts';
import { configNames, createRedactor } from './core/redact.ts';
import { exitCodeFor, reportsJson, type Report } from './core/report.ts';
import { sitesOverview, sitesText } from './edge/terminal/sites.ts';
import { reportsText } from './edge/terminal/text-render.ts';

export const EXIT = { ok: 0, problems: 1, failed: 2, usage: 64 } as const;

const EXIT_STATUS_HELP = `
Exit status: 0 healthy or nothing to do, 1 problems found or a plan, 2 could not check or a step failed, 64 usage or config error
With --json, stdout holds exactly one JSON report (an array for "all"); logs go to stderr.`;

/** serve, bot, worker: they run until a signal, so their statuses are about starting and stopping. */
const PROCESS_EXIT_HELP = `
Exit status: 0 stopped on SIGTERM or SIGINT, 2 could not start (Slack unreachable, say) or did not stop within 10 s, 64 usage or config error
Logs: one JSON object a line on stderr.`;

const PROCESS_ROLES = new Set(['serve', 'bot', 'worker']);

const CONFIG_CHECK_EXIT_HELP = `
Exit status: 0 valid, every secret read and every peer answers, 2 a peer not reached, 64 a config or secret error`;

/** The footer for the help of `command`: the checks' statuses where they apply, the process roles' for those, none for the rest. */
function exitHelpFor(command: Command): string {
  if (!command.parent) return EXIT_STATUS_HELP;
  if (PROCESS_ROLES.has(command.name())) return PROCESS_EXIT_HELP;
  if (command.name() === 'check' && command.parent.name() === 'config') return CONFIG_CHECK_EXIT_HELP;
  return command.options.some((o) => o.long === '--json' || o.long === '--apply') ? EXIT_STATUS_HELP : '';
}

/** The help line and target of each check and repair, from the registry; a job missing here is listed by its name. */
const JOB_HELP: Record<string, { summary: string; target: string }> = Object.fromEntries([
  ...CHECKS.map((c) => [c.name, { summary: c.summary, target: `${c.targetKind}|all` }] as const),
  ...FIX_COMMANDS.map(({ fix, targetKind }) => [fix.name, { summary: `plan (and with --apply, run) ${fix.plans}`, target: targetKind }] as const),
]);

interface CliOptions {
  config?: string;
  json: boolean;
  apply: boolean;
  /** timeline: --since and --format. */
  since?: string;
  format?: string;
}

type Out = { out: (s: string) => void; err: (s: string) => void };

const defaultOut: Out = {
  out: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
};

/** What one run of the program did: its exit status, and whether help was shown for a usage error. */
interface Outcome {
  code: number;
  helpAsError: boolean;
}

/** `maas-chatops --help | head -1`: the reader left; what is left to print has nowhere to go, and that is no error. */
let stdoutGuarded = false;
function quietOnClosedStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
}

export async function main(argv: string[], io: Out = defaultOut, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (io === defaultOut) quietOnClosedStdout();
  const outcome: Outcome = { code: EXIT.usage, helpAsError: false };
  const program = buildProgram(io, env, outcome);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return outcome.code;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
    if (err.code === 'commander.help') return outcome.helpAsError ? EXIT.usage : EXIT.ok;
    return EXIT.usage;
  }
}

function buildProgram(io: Out, env: NodeJS.ProcessEnv, outcome: Outcome): Command {
  const program = new Command('maas-chatops')
    .usage('<command> [target] [options]')
    .description('Checks and repairs for MAAS fleets and the Cluster API clusters on them, from Slack or a terminal.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--config <file>', 'the config file (default $MAAS_CHATOPS_CONFIG, else ./maas-chatops.yaml)')
    // Scripts written before --json and --apply became each command's own may still put them first.
    .addOption(new Option('--json').hideHelp())
    .addOption(new Option('--apply').hideHelp())
    .helpOption('-h, --help', 'print this help (after a command: its help)')
    .helpCommand('help [command]', 'print the help of a command')
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .addHelpText('afterAll', (context) => {
      outcome.helpAsError = context.error;
      return exitHelpFor(context.command);
    });

  const run: Runner = (name, action) =>
    async function (this: Command) {
      const options = this.optsWithGlobals<{ config?: string; json?: boolean; apply?: boolean; since?: string; format?: string }>();
      const args = this.args;
      const picked: CliOptions = {
        ...(options.config ? { config: options.config } : {}),
        json: options.json ?? false,
        apply: options.apply ?? false,
        ...(options.since ? { since: options.since } : {}),
        ...(options.format ? { format: options.format } : {}),
      };
      outcome.code = await guarded(name, io, () => action(picked, args));
    };

  program.commandsGroup('Processes:');
  for (const [role, summary] of [
    ['serve', 'Slack receiver, workers and drift schedulers in one process'],
    ['bot', 'only the Slack receiver'],
    ['worker', 'only workers and schedulers (run several against one Redis)'],
  ] as const) {
    program
      .command(role)
      .description(summary)
      .allowExcessArguments()
      .action(
        run(role, async (options) => {
          const { runRole, startFailed } = await import('./main.ts');
          // A process's stderr is JSON lines only: its config warnings and errors are logged, not printed.
          let loaded: LoadedConfig;
          try {
            loaded = loadConfig({ ...(options.config ? { path: options.config } : {}), env });
          } catch (err) {
            return startFailed(role, { env }, err);
          }
          return runRole(role, { loaded, env });
        }),
      );
  }
  program
    .command('lab')
    .description('the demo: simulators, bot and worker, a scripted conversation (a source checkout only)')
    .allowExcessArguments()
    .action(run('lab', () => runLabFromCheckout(env, io)));

  program.commandsGroup('Checks (inline, no Slack, no Redis):');
  program
    .command('sites')
    .description('the configured MAAS regions, sites and clusters')
    .option('--json', JSON_HELP)
    .allowExcessArguments()
    .action(
      run('sites', async (options) => {
        const { config } = load(options, env, io);
        const overview = sitesOverview(config);
        io.out(options.json ? JSON.stringify(overview, null, 2) : sitesText(overview));
        return EXIT.ok;
      }),
    );
  const jobs = [...jobRegistry.keys()];
  for (const name of jobs.filter((n) => !n.startsWith('fix-'))) addJobCommand(program, name, run, env, io);
  program.commandsGroup('Config:');
  program
    .command('config')
    .description('the config file: config check')
    .command('check')
    .description('load and validate the config, read every secret it names, say which peers answer')
    .option('--offline', 'check the shape only: reach no peer, read no secret file, accept unset env: variables (each named)')
    .action(async function (this: Command) {
      const opts = this.optsWithGlobals<{ config?: string; offline?: boolean }>();
      outcome.code = await guarded('config check', io, async () => {
        const { checkConfig } = await import('./edge/terminal/config-check.ts');
        const result = await checkConfig({ ...(opts.config ? { path: opts.config } : {}), env, offline: opts.offline ?? false, readSecrets: !opts.offline });
        for (const line of result.lines) io.out(line);
        return result.code;
      });
    });
  program.commandsGroup('Audit trail (reads Redis):');
  program
    .command('audit')
    .description('the latest entries of the audit trail')
    .argument('[target]', 'a site or cluster')
    .argument('[count]', 'how many entries (default 50)')
    .option('--json', 'print the entries as one JSON array')
    .action(
      run('audit', async (options, args) => {
        const { runAuditCli } = await import('./engine/audit/audit-cli.ts');
        return runAuditCli({ loaded: load(options, env, io), env, args, json: options.json, out: io.out, err: io.err });
      }),
    );
  program
    .command('timeline')
    .description('every event of an incident in time order: alerts, checks, plans, approvals, writes')
    .option('--json', 'the same as --format json')
    .argument('[target]', 'a site, a cluster or all (default all)')
    .option('--since <duration>', 'how far back: 30m, 2h, 1d (default 24h)')
    .option('--format <format>', 'md (default) or json (one array, oldest first)')
    .action(
      run('timeline', async (options, args) => {
        const { runTimelineCli } = await import('./engine/audit/timeline-cli.ts');
        const format = options.format ?? (options.json ? 'json' : undefined);
        return runTimelineCli({ loaded: load(options, env, io), env, args, ...(options.since ? { since: options.since } : {}), ...(format ? { format } : {}), out: io.out, err: io.err });
      }),
    );
  program.commandsGroup('Repairs (print the plan; --apply executes it under the same guards as Slack):');
  for (const name of jobs.filter((n) => n.startsWith('fix-'))) addJobCommand(program, name, run, env, io);
  program.commandsGroup('Commands:');
  return program;
}

const JSON_HELP = 'print exactly one JSON report on stdout';

/** Wraps a command's action: reads the options (wherever they stood on the line) and records its exit status. */
type Runner = (name: string, action: (options: CliOptions, args: string[]) => Promise<number>) => (this: Command) => Promise<void>;

function addJobCommand(program: Command, name: string, run: Runner, env: NodeJS.ProcessEnv, io: Out): void {
  const help = JOB_HELP[name] ?? { summary: name, target: 'target' };
  const command = program
    .command(name)
    .description(help.summary)
    .argument(`<${help.target}>`)
    .option('--json', JSON_HELP);
  if (name.startsWith('fix-')) command.option('--apply', 'run the plan, under the same guards as Slack');
  command.action(
      run(name, (options, [target = '']) => runJobInline(name, target, options, io, env)),
    );
}

/** Runs a command's action: an error it throws is printed on one line and becomes exit 64 (config, usage) or 2. */
async function guarded(name: string, io: Out, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (err) {
    io.err(`maas-chatops ${name}: ${describeError(err)}`);
    return isConfigOrUsageError(err) ? EXIT.usage : EXIT.failed;
  }
}

/** The lab ships with the sources only: the compiled build (the image) has no simulators. */
interface LabModule {
  runLab(options: { env: NodeJS.ProcessEnv; out: (s: string) => void; err: (s: string) => void }): Promise<number>;
}

async function runLabFromCheckout(env: NodeJS.ProcessEnv, io: Out): Promise<number> {
  // Not a literal: the build must not follow it and compile the simulators into dist/.
  const labEntry = '../lab/run-lab.ts';
  let lab: LabModule;
  try {
    lab = (await import(labEntry)) as LabModule;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    io.err('maas-chatops lab: the lab is not part of this installation; run it from a source checkout: npm ci && npm run lab');
    return EXIT.usage;
  }
  return lab.runLab({ env, out: io.out, err: io.err });
}

function load(options: CliOptions, env: NodeJS.ProcessEnv, io: Out): LoadedConfig {
  const loaded = loadConfig({ ...(options.config ? { path: options.config } : {}), env });
  for (const w of loaded.warnings) io.err(`warning: ${w}`);
  return loaded;
}

async function runJobInline(command: string, target: string, options: CliOptions, io: Out, env: NodeJS.ProcessEnv): Promise<number> {
  const loaded = load(options, env, io);
  const redact = createRedactor(secretValues(loaded), { names: configNames(loaded.config) });
  const log = createLogger({ redact, level: env.LOG_LEVEL ?? 'warn' });
  const { createRealAdapters } = await import('./adapters/real-adapters.ts');
  const adapters = createRealAdapters(loaded.config, { maasMaxBodyBytes: readMaasMaxBodyBytes(env) });
  const job = findJob(command);
  if (!job) return EXIT.usage;
  const data = { target, requestedBy: `terminal:${env.USER ?? 'unknown'}`, apply: options.apply, interactive: true };
  const reports: Report[] = await job.run({ config: loaded.config, adapters, log }, data);
  const output = options.json ? reportsJson(reports.length === 1 && target !== 'all' ? reports[0]! : reports) : reportsText(reports);
  io.out(redact(output));
  return exitCodeFor(reports);
}

/** Started as a program (`node dist/src/cli.js …`, as the image does) rather than imported. */
function startedAsProgram(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === import.meta.url;
  } catch {
    return false;
  }
}

if (startedAsProgram()) process.exitCode = await main(process.argv.slice(2));
