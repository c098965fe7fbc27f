import { readFileSync } from 'node:fs';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './errors.ts';
import { parseDuration } from './duration.ts';
import { Secret } from './secret.ts';
import { secretFragments } from './redact.ts';
import { kubeconfigSecretValues } from './kubeconfig-secrets.ts';
import { configSchema, type RawConfig, type sshEndpointSchema } from './config-schema.ts';
import { checkAlertRoutes } from './alert-route-rules.ts';


/** The config file's `redis:` block, secrets resolved (and printed as references). */
export interface RedisConfigBlock {
  sentinels: string[];
  sentinelName: string;
  sentinelUsername?: string;
  sentinelPassword?: Secret;
  username?: string;
  password?: Secret;
  tlsCa?: string;
  db?: number;
}

export interface SshEndpoint {
  host: string;
  port: number;
  user?: string;
  privateKey?: Secret;
  hostKey?: string;
}

export interface RackConfig {
  resolverHost: string;
  resolverPort: number;
  zone: string;
  probe: 'ssh' | 'direct';
  ssh?: SshEndpoint;
  forwarder?: { host: string; port: number };
  forwarderInstall?: string;
  subnet?: string | number;
  /** rack.dhcpdConfig: the dhcpd.conf MAAS wrote on the rack, when not at the snap's or the deb's path. */
  dhcpdConfig?: string;
  /** fix-resolver commissions this machine (a MAAS hostname) after the subnet change. */
  canary?: string;
}

export interface SiteConfig {
  name: string;
  maas: string;
  machines: { zone?: string; pool?: string; tags?: string[] };
  rack?: RackConfig;
  vmHostDefaults: Partial<SshEndpoint>;
  vmHosts: Record<string, Partial<SshEndpoint>>;
  /** known_hosts text: public keys, not secret, but read on use like a key file. */
  knownHosts?: Secret;
  /** sites.<name>.watch.vmHosts: watch the site's VM hosts' libvirt events (absent = off). */
  watchVmHosts?: boolean;
}

export interface ClusterConfig {
  name: string;
  maas: string;
  kube: { kubeconfig?: Secret; context?: string; namespace: string };
  maasCluster: string;
  preferredSubnets?: string[];
  controller: { namespace: string; deployment: string };
  /** Where dns-check asks what clients get for the API name (clusters.<name>.clientView). */
  clientView?: ClientViewConfig;
}

export interface ClientViewConfig {
  resolverHost: string;
  resolverPort: number;
  /** direct: from the bot; rack: dig on `site`'s rack over its pinned SSH session. */
  via: 'direct' | 'rack';
  site?: string;
}

export interface MaasRegionConfig {
  name: string;
  url: string;
  apiKey: Secret;
}

export interface SlackPolicy {
  alertChannel?: string;
  commandChannels: string[];
  operators?: string[];
  /** User ids, and user group ids (S…) that stand for the group's current members. */
  approvers: string[];
  selfApproval: boolean;
  /** How long a user group's members are cached (slack.userGroupCacheTtl); 5 minutes when absent. */
  userGroupCacheMs?: number;
  approvalTtlMs: number;
  /** Distinct approvers a plan needs (default 1); `approvalsRequiredFor` overrides it per repair. */
  approvalsRequired?: number;
  approvalsRequiredFor?: Record<string, number>;
  /** Who may run read-only checks and who may run repairs; an absent list = every operator. */
  permissions?: { checks?: string[]; repairs?: string[] };
}

export interface AuditConfig {
  /** The Redis stream key; absent = `<BullMQ prefix>:audit`. */
  key?: string;
  /** The stream is trimmed to about this many entries. */
  maxEntries: number;
}

export interface RepairConfig {
  maxSubjects: number;
  /** repair.commissionTimeout: how long fix-macs follows a re-commissioning (default 40 minutes). */
  commissionTimeoutMs?: number;
  /** repair.commissionPollInterval (default 15 s). */
  commissionPollMs?: number;
}

/** One `alertmanager.routes` entry: every `match` label equal selects it. */
export interface AlertRoute {
  match: Record<string, string>;
  check: string;
  target?: string;
  targetLabel?: string;
}

export interface AlertmanagerConfig {
  routes: AlertRoute[];
  windowMs: number;
}

/** The `watch:` block: the management-cluster informers (docs/configuration.md). */
export interface WatchConfig {
  clusters: boolean;
  debounceMs: number;
  silentAfterMs: number;
  relistEveryMs: number;
}

/** `concurrency:`; an absent value is the default of the code that uses it. */
export interface ConcurrencyConfig {
  /** Targets of an `all` checked at once (default DEFAULT_TARGET_CONCURRENCY). */
  targets?: number;
  /** VM hosts one mac-diff reads at once (default 32). */
  vmHosts?: number;
}

export interface Config {
  path: string;
  slack: SlackPolicy;
  maas: Record<string, MaasRegionConfig>;
  sites: Record<string, SiteConfig>;
  clusters: Record<string, ClusterConfig>;
  schedules: { dns?: number; resolver?: number; macs?: number };
  /** Absent in configs built by hand: the watch then runs with its defaults. */
  watch?: WatchConfig;
  /** The `alertmanager:` block; absent = no routes (POST /alertmanager answers, and runs nothing). */
  alertmanager?: AlertmanagerConfig;
  repair: RepairConfig;
  concurrency?: ConcurrencyConfig;
  /** Absent in configs built by hand; loadConfig always sets it. */
  audit?: AuditConfig;
  /** The `redis:` block (Sentinel), secrets resolved; the environment's REDIS_URL / REDIS_SENTINELS win over it. */
  redis?: RedisConfigBlock;
}

export interface LoadedConfig {
  config: Config;
  /**
   * Every secret value read so far (and its fragments) for the redaction pass. The array grows when
   * a deferred `file:` secret is first used: pass `() => loaded.secrets` to createRedactor.
   */
  secrets: string[];
  /** Every `file:` reference, read at its first use (its key in the file, and the secret). */
  deferred: DeferredSecret[];
  warnings: string[];
}

export interface DeferredSecret {
  /** The config key: `sites.site-b.rack.ssh.privateKey`. */
  where: string;
  secret: Secret;
}

export interface LoadOptions {
  path?: string;
  env?: NodeJS.ProcessEnv;
  readFile?: (path: string) => string;
  /** `config check --offline`: an `env:` reference whose variable is unset is deferred like a `file:` one instead of failing the load. */
  deferUnsetEnv?: boolean;
}

const readUtf8 = (p: string) => readFileSync(p, 'utf8');

export function configPath(env: NodeJS.ProcessEnv, explicit?: string): string {
  return explicit ?? env.MAAS_CHATOPS_CONFIG ?? './maas-chatops.yaml';
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const readFile = options.readFile ?? readUtf8;
  const path = configPath(env, options.path);
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new ConfigError(
      `${path}: cannot read the config file (${why})`,
      'Pass --config FILE or set MAAS_CHATOPS_CONFIG; README.md shows an example',
    );
  }
  return parseConfigText(text, { path, env, readFile, deferUnsetEnv: options.deferUnsetEnv ?? false });
}

export function parseConfigText(
  text: string,
  options: { path: string; env: NodeJS.ProcessEnv; readFile?: (path: string) => string; deferUnsetEnv?: boolean },
): LoadedConfig {
  const { path } = options;
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw yamlError(path, err);
  }
  if (doc === null || doc === undefined) doc = {};
  const parsed = configSchema.safeParse(doc);
  if (!parsed.success) throw new ConfigError(`${path}: ${formatIssue(parsed.error.issues[0])}`, hintFor(parsed.error.issues[0]));
  const resolver = new SecretResolver(options.env, options.readFile ?? readUtf8, path, options.deferUnsetEnv ?? false);
  const config = buildConfig(parsed.data, path, resolver);
  checkReferences(config, path);
  checkAlertRoutes(config, path);
  return { config, secrets: resolver.fragments, deferred: resolver.deferred, warnings: resolver.warnings };
}

/** `file:29:3: malformed YAML: <what the parser says>`, and the fix names the same place. */
function yamlError(path: string, err: unknown): ConfigError {
  const e = err as { message?: string; linePos?: { line: number; col: number }[] };
  const what = (e.message ?? String(err)).split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  const at = e.linePos?.[0];
  if (!at) return new ConfigError(`${path}: malformed YAML: ${what}`, 'Fix the YAML syntax there');
  return new ConfigError(`${path}:${at.line}:${at.col}: malformed YAML: ${what}`, `Fix the YAML at line ${at.line}, column ${at.col} (the indentation, a missing closing bracket or quote)`);
}

type Issue = z.core.$ZodIssue | undefined;

/** A key the schema needs that the file does not have: zod says "expected string, received undefined". */
function isMissing(issue: Issue): boolean {
  return issue?.code === 'invalid_type' && /received undefined$/.test(issue.message);
}

function formatIssue(issue: Issue): string {
  if (!issue) return 'invalid config';
  const where = issue.path.join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  }
  if (isMissing(issue)) return `${where}: missing (a ${issue.code === 'invalid_type' ? issue.expected : 'value'} is required here)`;
  if (issue.code === 'invalid_type') return `${where}: must be ${TYPE_WORDS[issue.expected] ?? `a ${issue.expected}`}, not ${receivedOf(issue.message)}`;
  if (issue.code === 'invalid_format' && issue.format === 'url') return `${where}: must be a URL such as http://10.11.130.11:5240/MAAS (a scheme, a host and a path)`;
  return `${where}: ${issue.message}`;
}

/** What a YAML writer calls each shape zod expects. */
const TYPE_WORDS: Record<string, string> = {
  array: 'a list ([a, b] or one "- item" a line)',
  object: 'a mapping (indented key: value lines, or { key: value })',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
};

/** zod says "expected array, received string": the part after "received", as YAML would call it. */
function receivedOf(message: string): string {
  const received = /received (\w+)/.exec(message)?.[1] ?? 'that';
  return received === 'object' ? 'a mapping' : received === 'array' ? 'a list' : received === 'null' ? 'empty' : `a ${received}`;
}

function hintFor(issue: Issue): string {
  if (issue?.code === 'unrecognized_keys') return 'Remove it or check its spelling against docs/configuration.md';
  if (isMissing(issue)) return `Add ${String(issue?.path.at(-1))}: under ${issue?.path.slice(0, -1).join('.') || 'the top level'}; docs/configuration.md shows an example`;
  return 'Fix that value; docs/configuration.md lists every key';
}

interface SecretOptions {
  /** Picks what to redact from a structured secret (a kubeconfig is mostly not secret); null = all of it. */
  fragments?: (value: string) => string[] | null;
  /** Throws a ConfigError when the value is not what the key needs. */
  validate?: (value: string) => void;
}

/**
 * Resolves secret references. `env:` and literals are read at load; `file:` is deferred to its first
 * use, so a process that never uses a key file (the bot runs no SSH) does not need it mounted.
 */
class SecretResolver {
  readonly warnings: string[] = [];
  /** Grows as deferred secrets are read: the redactor holds this array, not a copy. */
  readonly fragments: string[] = [];
  readonly deferred: DeferredSecret[] = [];

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly readFile: (path: string) => string,
    private readonly path: string,
    private readonly deferUnsetEnv: boolean,
  ) {}

  #deferred(ref: string): boolean {
    return ref.startsWith('file:') || (this.deferUnsetEnv && ref.startsWith('env:') && !this.env[ref.slice(4)]);
  }

  secret(ref: string, where: string, options: SecretOptions = {}): Secret {
    const source = ref.startsWith('env:') || ref.startsWith('file:') ? ref : 'literal';
    const take = (value: string) => {
      options.validate?.(value);
      this.#remember(options.fragments?.(value) ?? null, value, source);
      return value;
    };
    if (!this.#deferred(ref)) return new Secret(take(this.value(ref, where)), source);
    const secret = Secret.deferred(() => take(this.value(ref, where)), source);
    this.deferred.push({ where, secret });
    return secret;
  }

  /** A referenced value that is not secret (known_hosts): deferred like a secret, never redacted. */
  plain(ref: string, where: string): Secret {
    if (!this.#deferred(ref)) return new Secret(this.value(ref, where, false), ref.startsWith('env:') ? ref : 'literal');
    const value = Secret.deferred(() => this.value(ref, where, false), ref);
    this.deferred.push({ where, secret: value });
    return value;
  }

  #remember(chosen: string[] | null, value: string, source: string): void {
    const fresh = (chosen ?? secretFragments(new Secret(value, source))).filter((f) => !this.fragments.includes(f));
    this.fragments.push(...fresh);
  }

  private value(ref: string, where: string, warnLiteral = true): string {
    if (ref.startsWith('env:')) {
      const name = ref.slice(4);
      const v = this.env[name];
      if (v === undefined || v === '') {
        throw new ConfigError(`${this.path}: ${where}: environment variable ${name} is not set`, `Export ${name} or change the reference`);
      }
      return v;
    }
    if (ref.startsWith('file:')) {
      const file = ref.slice(5);
      try {
        return this.readFile(file).replace(/\s+$/, '');
      } catch (err) {
        throw new ConfigError(`${this.path}: ${where}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, 'Check the path and its permissions (in Kubernetes: the Secret mounted there)');
      }
    }
    if (/^[a-z]+:[^\s:/][^\s:]*$/.test(ref)) {
      throw new ConfigError(`${this.path}: ${where}: unknown secret reference "${ref.split(':')[0]}:"`, 'Use env:NAME, file:/path, or a literal value');
    }
    if (warnLiteral) this.warnings.push(`${where} is written in ${this.path} as a literal; prefer env:NAME or file:/path`);
    return ref;
  }
}

function splitHostPort(value: string, defaultPort: number): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1] as string, port: bracketed[2] ? Number(bracketed[2]) : defaultPort };
  const colonCount = (value.match(/:/g) ?? []).length;
  if (colonCount === 1) {
    const [h, p] = value.split(':') as [string, string];
    return { host: h, port: Number(p) };
  }
  return { host: value, port: defaultPort };
}

type RawSsh = z.infer<typeof sshEndpointSchema>;

function buildSsh(raw: RawSsh, where: string, r: SecretResolver): Partial<SshEndpoint> {
  const out: Partial<SshEndpoint> = {};
  if (raw.host !== undefined) out.host = raw.host;
  if (raw.port !== undefined) out.port = raw.port;
  if (raw.user !== undefined) out.user = raw.user;
  if (raw.hostKey !== undefined) out.hostKey = raw.hostKey;
  if (raw.privateKey !== undefined) out.privateKey = r.secret(raw.privateKey, `${where}.privateKey`);
  return out;
}

function buildConfig(raw: RawConfig, path: string, r: SecretResolver): Config {
  const maas: Record<string, MaasRegionConfig> = {};
  for (const [name, region] of Object.entries(raw.maas)) {
    const validate = (key: string) => {
      const parts = key.split(':');
      if (parts.length !== 3 || parts.some((p) => p === '')) {
        throw new ConfigError(`${path}: maas.${name}.apiKey: not a MAAS API key`, 'A MAAS API key is consumer_key:token_key:token_secret (`maas apikey --username=...`)');
      }
    };
    maas[name] = { name, url: region.url.replace(/\/+$/, ''), apiKey: r.secret(region.apiKey, `maas.${name}.apiKey`, { validate }) };
  }
  const sites: Record<string, SiteConfig> = {};
  for (const [name, site] of Object.entries(raw.sites)) sites[name] = buildSite(name, site, r);
  const clusters: Record<string, ClusterConfig> = {};
  for (const [name, c] of Object.entries(raw.clusters)) {
    const kube: ClusterConfig['kube'] = { namespace: c.kube.namespace };
    if (c.kube.kubeconfig) kube.kubeconfig = r.secret(c.kube.kubeconfig, `clusters.${name}.kube.kubeconfig`, { fragments: kubeconfigSecretValues });
    if (c.kube.context) kube.context = c.kube.context;
    const cluster: ClusterConfig = {
      name,
      maas: c.maas,
      kube,
      maasCluster: c.maasCluster ?? name,
      controller: c.controller ?? { namespace: 'capmaas-system', deployment: 'capmaas-controller-manager' },
    };
    if (c.preferredSubnets) cluster.preferredSubnets = c.preferredSubnets;
    if (c.clientView) {
      const resolver = splitHostPort(c.clientView.resolver, 53);
      cluster.clientView = { resolverHost: resolver.host, resolverPort: resolver.port, via: c.clientView.via, ...(c.clientView.site ? { site: c.clientView.site } : {}) };
    }
    clusters[name] = cluster;
  }
  const schedules: Config['schedules'] = {};
  for (const key of ['dns', 'resolver', 'macs'] as const) {
    const v = raw.schedules[key];
    if (v) schedules[key] = parseDuration(v) as number;
  }
  const slack: SlackPolicy = {
    commandChannels: raw.slack.commandChannels,
    approvers: raw.slack.approvers,
    selfApproval: raw.slack.selfApproval,
    approvalTtlMs: parseDuration(raw.slack.approvalTtl) as number,
    approvalsRequired: raw.slack.approvalsRequired,
    userGroupCacheMs: parseDuration(raw.slack.userGroupCacheTtl) as number,
  };
  if (raw.slack.approvalsRequiredFor) slack.approvalsRequiredFor = raw.slack.approvalsRequiredFor;
  checkApprovalQuorum(slack, path);
  if (raw.slack.alertChannel) slack.alertChannel = raw.slack.alertChannel;
  if (raw.slack.operators) slack.operators = raw.slack.operators;
  if (raw.slack.permissions) slack.permissions = raw.slack.permissions;
  const audit: AuditConfig = { maxEntries: raw.audit.maxEntries, ...(raw.audit.key ? { key: raw.audit.key } : {}) };
  const repair: RepairConfig = { maxSubjects: raw.repair.maxSubjects };
  if (raw.repair.commissionTimeout) repair.commissionTimeoutMs = parseDuration(raw.repair.commissionTimeout) as number;
  if (raw.repair.commissionPollInterval) repair.commissionPollMs = parseDuration(raw.repair.commissionPollInterval) as number;
  const watch: WatchConfig = {
    clusters: raw.watch.clusters,
    debounceMs: parseDuration(raw.watch.debounce) as number,
    silentAfterMs: parseDuration(raw.watch.silentAfter) as number,
    relistEveryMs: parseDuration(raw.watch.relistEvery) as number,
  };
  const config: Config = { path, slack, maas, sites, clusters, schedules, watch, repair, audit };
  if (raw.alertmanager) config.alertmanager = { routes: raw.alertmanager.routes.map(alertRoute), windowMs: parseDuration(raw.alertmanager.window) as number };
  if (Object.keys(raw.concurrency).length) config.concurrency = { ...raw.concurrency };
  if (raw.redis) config.redis = buildRedis(raw.redis, r);
  return config;
}

function alertRoute(raw: NonNullable<RawConfig['alertmanager']>['routes'][number]): AlertRoute {
  return { match: raw.match, check: raw.check, ...(raw.target ? { target: raw.target } : {}), ...(raw.targetLabel ? { targetLabel: raw.targetLabel } : {}) };
}

function buildRedis(raw: NonNullable<RawConfig['redis']>, r: SecretResolver): RedisConfigBlock {
  const out: RedisConfigBlock = { sentinels: raw.sentinels, sentinelName: raw.sentinelName };
  if (raw.sentinelUsername) out.sentinelUsername = raw.sentinelUsername;
  if (raw.sentinelPassword) out.sentinelPassword = r.secret(raw.sentinelPassword, 'redis.sentinelPassword');
  if (raw.username) out.username = raw.username;
  if (raw.password) out.password = r.secret(raw.password, 'redis.password');
  if (raw.tlsCa) out.tlsCa = raw.tlsCa;
  if (raw.db !== undefined) out.db = raw.db;
  return out;
}

function buildSite(name: string, site: RawConfig['sites'][string], r: SecretResolver): SiteConfig {
  const where = `sites.${name}`;
  const { default: defaults, ...hosts } = site.vmHosts;
  const vmHosts: Record<string, Partial<SshEndpoint>> = {};
  for (const [h, entry] of Object.entries(hosts)) vmHosts[h] = buildSsh(entry, `${where}.vmHosts.${h}`, r);
  const out: SiteConfig = {
    name,
    maas: site.maas,
    machines: site.machines,
    vmHostDefaults: defaults ? buildSsh(defaults, `${where}.vmHosts.default`, r) : {},
    vmHosts,
  };
  if (site.knownHosts) out.knownHosts = r.plain(site.knownHosts, `${where}.knownHosts`);
  if (site.watch?.vmHosts) out.watchVmHosts = true;
  if (site.rack) {
    const resolver = splitHostPort(site.rack.resolver, 53);
    const rack: RackConfig = {
      resolverHost: resolver.host,
      resolverPort: resolver.port,
      zone: site.rack.zone,
      probe: site.rack.probe,
    };
    if (site.rack.ssh) {
      const ssh = buildSsh(site.rack.ssh, `${where}.rack.ssh`, r);
      rack.ssh = { ...ssh, host: ssh.host ?? resolver.host, port: ssh.port ?? 22 };
    }
    if (site.rack.forwarder) rack.forwarder = splitHostPort(site.rack.forwarder, 53);
    if (site.rack.forwarderInstall) rack.forwarderInstall = site.rack.forwarderInstall;
    if (site.rack.subnet !== undefined) rack.subnet = site.rack.subnet;
    if (site.rack.dhcpdConfig) rack.dhcpdConfig = site.rack.dhcpdConfig;
    if (site.rack.canary) rack.canary = site.rack.canary;
    out.rack = rack;
  }
  return out;
}

function checkReferences(config: Config, path: string): void {
  const regions = Object.keys(config.maas);
  const known = regions.length ? `known: ${regions.join(', ')}` : 'no regions are configured under maas:';
  for (const [kind, entries] of [['sites', config.sites], ['clusters', config.clusters]] as const) {
    for (const [name, entry] of Object.entries(entries)) {
      if (!config.maas[entry.maas]) {
        throw new ConfigError(`${path}: ${kind}.${name}.maas: no MAAS region "${entry.maas}"; ${known}`, 'Add the region under maas: or fix the name');
      }
    }
  }
  for (const [name, cluster] of Object.entries(config.clusters)) {
    const view = cluster.clientView;
    if (!view) continue;
    const where = `${path}: clusters.${name}.clientView`;
    // A site that does not exist is a typo whatever via says: with via: direct it would be silently ignored.
    if (view.site && !config.sites[view.site]) {
      const sites = Object.keys(config.sites);
      const fix = view.via === 'rack' ? 'Name a site under sites: whose rack runs dig, or set clientView.via: direct' : 'Name a site under sites:, or remove clientView.site (via: direct asks from the bot and uses no site)';
      throw new ConfigError(`${where}.site: no site "${view.site}"; ${sites.length ? `known: ${sites.join(', ')}` : 'no sites are configured'}`, fix);
    }
    if (view.via !== 'rack') continue;
    if (!view.site) throw new ConfigError(`${where}.site: required when via is rack`, 'Name the site whose rack runs dig (its rack.ssh is used), or set via: direct');
    if (!config.sites[view.site]?.rack?.ssh) {
      throw new ConfigError(`${where}.site: site "${view.site}" has no rack.ssh to run dig on`, `Add sites.${view.site}.rack.ssh, or set clientView.via: direct`);
    }
  }
  for (const name of Object.keys(config.clusters)) {
    if (config.sites[name]) {
      throw new ConfigError(`${path}: clusters.${name}: a site is also named "${name}"`, `Rename one of them: commands take a site or a cluster by name (/maas silence ${name} would mute both)`);
    }
  }
  for (const [name, site] of Object.entries(config.sites)) {
    if (site.rack?.probe === 'ssh' && !site.rack.ssh) {
      throw new ConfigError(`${path}: sites.${name}.rack.ssh: required when rack.probe is ssh`, 'Add rack.ssh (host, user, privateKey, hostKey) or set rack.probe: direct');
    }
  }
}

/** The config as YAML with every secret replaced by its reference. */
export function printableConfig(config: Config): string {
  return stringifyYaml(JSON.parse(JSON.stringify(config)));
}

/** What the redactor must know of a loaded config: its secrets so far and later (deferred ones as they are read), and `extra`. */
export function secretValues(loaded: Pick<LoadedConfig, 'secrets'>, extra: readonly string[] = []): () => readonly string[] {
  return () => (extra.length ? [...loaded.secrets, ...extra] : loaded.secrets);
}

/** How many distinct approvers a plan of this repair needs before it runs. */
export function approvalsRequired(policy: Pick<SlackPolicy, 'approvalsRequired' | 'approvalsRequiredFor'>, repair: string): number {
  return policy.approvalsRequiredFor?.[repair] ?? policy.approvalsRequired ?? 1;
}

/** A user group id (S…) where users are listed: it stands for the group's members. */
export function isUserGroupId(entry: string): boolean {
  return /^S[A-Z0-9]{2,20}$/.test(entry);
}

/** A quorum larger than the approvers who could meet it would leave every such plan waiting until it expires. */
function checkApprovalQuorum(slack: SlackPolicy, path: string): void {
  // A user group's size is known only once it is read, so any quorum may be met.
  if (!slack.approvers.length || slack.approvers.some(isUserGroupId)) return;
  const asked: [string, number][] = [['slack.approvalsRequired', slack.approvalsRequired ?? 1], ...Object.entries(slack.approvalsRequiredFor ?? {}).map(([k, n]): [string, number] => [`slack.approvalsRequiredFor.${k}`, n])];
  const available = slack.approvers.length;
  for (const [key, n] of asked) {
    if (n > available) {
      throw new ConfigError(`${path}: ${key} is ${n}, but slack.approvers lists ${available}: no such plan could ever run`, `List at least ${n} approvers in slack.approvers, or lower ${key}`);
    }
  }
}
