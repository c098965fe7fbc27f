import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import type { MaasRegionConfig } from '../../core/config.ts';
import { ChatopsError } from '../../core/errors.ts';
import { describeMaasErrorBody, MaasApiError } from './maas-api-error.ts';
import { submittedSecrets } from './error-body-secrets.ts';
import { readCappedBody } from './capped-body.ts';
import { KeptTooLargeError, NotJsonError, readKeptJson } from './kept-json.ts';
import { COUNT_ONLY, DISCOVERY_LIST, EVENT_PAGE, MACHINE_LIST, POWER_PARAMETERS, type KeptShape } from './kept-shapes.ts';
import { maasOAuthHeader } from './oauth-header.ts';
import { observeAttempts, type AttemptOutcome } from './attempt-observer.ts';
import { maasClockOffsetS, readAuthRefusal } from './auth-refusal.ts';
import { signEachAttempt } from './sign-each-attempt.ts';
import { retryOptionsFor, TIMEOUT_CODES, type RetryPolicy } from './retry.ts';
import { withoutSecretFields } from './secret-fields.ts';
import type {
  DnsResource,
  MaasClient,
  MaasDiscovery,
  MaasEventPage,
  MaasInterface,
  MaasMachine,
  MachineFilter,
  PowerParameters,
  IpRange,
  MaasUser,
  MaasVersion,
  RackBootImages,
  RackController,
  Subnet,
  SubnetDnsUpdate,
} from './types.ts';

export interface MaasRequestInfo {
  method: string;
  /** Relative to `<url>/api/2.0/`, with the query. */
  path: string;
  /** The HTTP status, or 0 when no answer came (network error, timeout). */
  status: number;
  ms: number;
  /** Body bytes received (0 when no answer came). */
  bytes?: number;
}

export interface MaasClientOptions {
  /** Per attempt: to connect, for the answer to start, and between two pieces of its body. Default 10 000. */
  timeoutMs?: number;
  /** How many times a failed read (GET) is repeated: default 2, so at most 3 attempts. A write is sent once. */
  retries?: number;
  /** The wait before the first repeat; it doubles for each further one. Default 250. */
  backoffMs?: number;
  /** The longest wait between attempts, also when MAAS's Retry-After asks for more. Default 10 000. */
  maxRetryWaitMs?: number;
  /** Called after every attempt, for metrics and logs. */
  onRequest?: (info: MaasRequestInfo) => void;
  /** Largest response body read (MAAS_MAX_BODY_MIB); a longer one is refused. Default 64 MiB. */
  maxBodyBytes?: number;
}

/** A MaasClient that also owns its connection pool. */
export interface ClosableMaasClient extends MaasClient {
  /** Closes the kept-alive connections. Idle sockets do not hold the process open either way. */
  close(): Promise<void>;
}

type Query = [string, string][];

interface CallSpec {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  query?: Query;
  form?: Query;
  /** Read the answer as a stream and keep only this (kept-shapes.ts). */
  kept?: KeptShape;
}

/** `date`: MAAS's Date header, which says how far its clock is from ours. */
type Answer = { ok: true; value: unknown } | { ok: false; status: number; text: string; date: string | undefined };

const DEFAULTS = { timeoutMs: 10_000, retries: 2, backoffMs: 250, maxRetryWaitMs: 10_000, maxBodyBytes: 64 * 1024 * 1024 };

export function createMaasClient(region: MaasRegionConfig, options: MaasClientOptions = {}): ClosableMaasClient {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
  const policy: RetryPolicy = {
    retries: options.retries ?? DEFAULTS.retries,
    backoffMs: options.backoffMs ?? DEFAULTS.backoffMs,
    maxWaitMs: options.maxRetryWaitMs ?? DEFAULTS.maxRetryWaitMs,
  };
  const regionUrl = region.url.replace(/\/+$/, '');
  const apiBase = `${regionUrl}/api/2.0/`;
  // One pool per region: a site scan reuses a few kept-alive connections instead of one per call.
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 8, connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  /** One call: undici repeats it as retry.ts says; every attempt is reported to onRequest and counted. */
  async function call<T>(spec: CallSpec): Promise<T> {
    const shownPath = spec.query?.length ? `${spec.path}?${new URLSearchParams(spec.query).toString()}` : spec.path;
    const url = apiBase + shownPath;
    const apiKey = region.apiKey.reveal();
    const body = spec.form ? new URLSearchParams(spec.form).toString() : undefined;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const attempts: AttemptOutcome[] = [];
    // Composed inside the retry interceptor: each attempt is signed afresh (MAAS spends a nonce once a request succeeds).
    const dispatcher = agent.compose(
      signEachAttempt(() => maasOAuthHeader(apiKey, { method: spec.method, url })),
      observeAttempts((outcome) => {
        attempts.push(outcome);
        options.onRequest?.({ method: spec.method, path: shownPath, status: outcome.status, ms: outcome.ms, bytes: outcome.bytes });
      }),
      interceptors.retry(retryOptionsFor(spec.method, policy)),
    );
    let answer: Answer;
    try {
      const response = await request(url, { method: spec.method, headers, body, dispatcher });
      answer = await readAnswer(response, spec, shownPath);
    } catch (err) {
      if (err instanceof ChatopsError) throw err;
      throw unreachable(err, spec.method, shownPath, Math.max(attempts.length, 1));
    }
    if (!answer.ok) {
      // A 401's text is classified and dropped (it can quote the real token secret); other bodies are scrubbed.
      const auth = answer.status === 401 ? readAuthRefusal(answer.text) : undefined;
      const clockOffsetS = answer.status === 401 ? maasClockOffsetS(answer.date, auth, Date.now()) : undefined;
      throw new MaasApiError({
        region: region.name,
        status: answer.status,
        body: auth ? auth.text : describeMaasErrorBody(answer.text, apiKey, submittedSecrets(spec.form)),
        method: spec.method,
        path: shownPath,
        ...(auth ? { auth } : {}),
        ...(clockOffsetS !== undefined ? { clockOffsetS } : {}),
      });
    }
    return answer.value as T;
  }

  /** A list with a kept shape is read as a stream, keeping only that; any other answer is read whole, up to the cap. */
  async function readAnswer(response: Dispatcher.ResponseData, spec: CallSpec, path: string): Promise<Answer> {
    const status = response.statusCode;
    const ok = status >= 200 && status < 300;
    if (ok && spec.kept) return { ok, value: await readKept(response, spec.method, path, spec.kept) };
    const text = await readCappedBody(response, maxBodyBytes, () => tooLarge(spec.method, path));
    return ok ? { ok, value: parseJson(text, spec.method, path) } : { ok, status, text, date: headerText(response.headers.date) };
  }

  async function readKept(response: Dispatcher.ResponseData, method: string, path: string, shape: KeptShape): Promise<unknown> {
    try {
      return (await readKeptJson(response.body as AsyncIterable<Buffer>, shape, maxBodyBytes)).value;
    } catch (err) {
      response.body.destroy();
      if (err instanceof KeptTooLargeError) throw keptTooLarge(method, path, err);
      if (err instanceof NotJsonError) throw notJson(method, path);
      throw err;
    }
  }

  function keptTooLarge(method: string, path: string, err: KeptTooLargeError): ChatopsError {
    const read = `${err.items} ${err.items === 1 ? 'entry' : 'entries'} and ${formatBytes(err.bytesRead, true)} of JSON read`;
    return new ChatopsError('MAAS_HTTP', `MAAS ${region.name} answered ${method} ${path} with more than ${formatBytes(maxBodyBytes)} to keep, even of only the fields the checks read (${read}); the rest was not read`, {
      hint: `MAAS_MAX_BODY_MIB caps what is kept of one MAAS answer (under 1 KiB per machine): raise it, or narrow the site's machine filter (zone, pool, tags)`,
    });
  }

  function tooLarge(method: string, path: string): ChatopsError {
    return new ChatopsError('MAAS_HTTP', `MAAS ${region.name} answered ${method} ${path} with a body larger than ${formatBytes(maxBodyBytes)}; it was not read`, {
      hint: 'Narrow the site\'s machine filter (zone, pool, tags), or raise MAAS_MAX_BODY_MIB if the region really holds that much',
    });
  }

  /** Secret fields (power_pass…) leave the parsed answer here, before anything can print it. */
  function parseJson(text: string, method: string, path: string): unknown {
    try {
      return withoutSecretFields(JSON.parse(text) as unknown);
    } catch {
      throw notJson(method, path);
    }
  }

  function notJson(method: string, path: string): ChatopsError {
    return new ChatopsError('MAAS_HTTP', `MAAS ${region.name} answered ${method} ${path} with something that is not JSON`, {
      hint: `Check that maas.${region.name}.url (${regionUrl}) is the MAAS region API; it usually ends in /MAAS`,
    });
  }

  /** No answer came (after the repeats retry.ts allows): a timeout, or the network's own error. */
  function unreachable(err: unknown, method: string, path: string, attempts: number): ChatopsError {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    const what = TIMEOUT_CODES.includes(networkCode(err) ?? '')
      ? `MAAS ${region.name} at ${regionUrl} did not answer ${method} ${path} within ${formatMs(timeoutMs)} (${tries})`
      : `MAAS ${region.name} at ${regionUrl} is unreachable: ${describeNetworkError(err)} (${method} ${path}, ${tries})`;
    return new ChatopsError('MAAS_UNREACHABLE', what, {
      hint: `Check that the MAAS region is up and that maas.${region.name}.url is right (it usually ends in /MAAS)`,
      cause: err,
    });
  }

  const seg = (value: string | number) => encodeURIComponent(String(value));

  return {
    cacheKey: `${region.name} ${regionUrl} ${createHash('sha256').update(region.apiKey.reveal()).digest('hex').slice(0, 16)}`,
    listMachines(filter: MachineFilter = {}) {
      return call<MaasMachine[]>({ method: 'GET', path: 'machines/', query: machineFilterQuery(filter), kept: MACHINE_LIST });
    },
    getMachine(systemId) {
      return call<MaasMachine>({ method: 'GET', path: `machines/${seg(systemId)}/` });
    },
    powerParameters(systemIds) {
      const query: Query = [['op', 'power_parameters'], ...(systemIds ?? []).map((id): [string, string] => ['id', id])];
      return call<Record<string, PowerParameters>>({ method: 'GET', path: 'machines/', query, kept: POWER_PARAMETERS });
    },
    listInterfaces(systemId) {
      return call<MaasInterface[]>({ method: 'GET', path: `nodes/${seg(systemId)}/interfaces/` });
    },
    getInterface(systemId, interfaceId) {
      return call<MaasInterface>({ method: 'GET', path: `nodes/${seg(systemId)}/interfaces/${seg(interfaceId)}/` });
    },
    updateInterfaceMac(systemId, interfaceId, mac) {
      return call<MaasInterface>({
        method: 'PUT',
        path: `nodes/${seg(systemId)}/interfaces/${seg(interfaceId)}/`,
        form: [['mac_address', mac]],
      });
    },
    markBroken(systemId, comment) {
      return call<MaasMachine>({ method: 'POST', path: `machines/${seg(systemId)}/`, query: [['op', 'mark_broken']], form: commentForm(comment) });
    },
    markFixed(systemId, comment) {
      return call<MaasMachine>({ method: 'POST', path: `machines/${seg(systemId)}/`, query: [['op', 'mark_fixed']], form: commentForm(comment) });
    },
    commission(systemId) {
      return call<MaasMachine>({ method: 'POST', path: `machines/${seg(systemId)}/`, query: [['op', 'commission']] });
    },
    findDnsResources(fqdn) {
      return call<DnsResource[]>({ method: 'GET', path: 'dnsresources/', query: [['fqdn', fqdn]] });
    },
    getDnsResource(id) {
      return call<DnsResource>({ method: 'GET', path: `dnsresources/${seg(id)}/` });
    },
    async updateDnsResourceIps(id, ips) {
      const value = dnsIpValue(id, ips);
      return call<DnsResource>({ method: 'PUT', path: `dnsresources/${seg(id)}/`, form: [['ip_addresses', value]] });
    },
    listSubnets() {
      return call<Subnet[]>({ method: 'GET', path: 'subnets/' });
    },
    getSubnet(id) {
      return call<Subnet>({ method: 'GET', path: `subnets/${seg(id)}/` });
    },
    updateSubnetDns(id, update) {
      return call<Subnet>({ method: 'PUT', path: `subnets/${seg(id)}/`, form: subnetDnsForm(update) });
    },
    listRackControllers() {
      return call<RackController[]>({ method: 'GET', path: 'rackcontrollers/' });
    },
    listBootImages(systemId) {
      return call<RackBootImages>({ method: 'GET', path: `rackcontrollers/${seg(systemId)}/`, query: [['op', 'list_boot_images']] });
    },
    getConfig(name) {
      return call<unknown>({ method: 'GET', path: 'maas/', query: [['op', 'get_config'], ['name', name]] });
    },
    listIpRanges() {
      return call<IpRange[]>({ method: 'GET', path: 'ipranges/' });
    },
    resaveIpRange(id, comment) {
      return call<IpRange>({ method: 'PUT', path: `ipranges/${seg(id)}/`, form: [['comment', comment]] });
    },
    whoami() {
      return call<MaasUser>({ method: 'GET', path: 'users/?op=whoami' });
    },
    version() {
      return call<MaasVersion>({ method: 'GET', path: 'version/' });
    },
    unknownMacDiscoveries() {
      return call<MaasDiscovery[]>({ method: 'GET', path: 'discovery/', query: [['op', 'by_unknown_mac']], kept: DISCOVERY_LIST });
    },
    async countDiscoveries() {
      return (await call<unknown[]>({ method: 'GET', path: 'discovery/', kept: COUNT_ONLY })).length;
    },
    queryEvents({ ids, limit, level }) {
      const query: Query = [['op', 'query'], ...ids.map((id): [string, string] => ['id', id]), ['limit', String(limit)], ...(level ? [['level', level] as [string, string]] : [])];
      return call<MaasEventPage>({ method: 'GET', path: 'events/', query, kept: EVENT_PAGE });
    },
    close() {
      return agent.close();
    },
  };
}

export function machineFilterQuery(filter: MachineFilter): Query {
  const query: Query = [];
  if (filter.zone !== undefined) query.push(['zone', filter.zone]);
  if (filter.pool !== undefined) query.push(['pool', filter.pool]);
  for (const key of ['tags', 'hostname', 'id', 'mac_address'] as const) {
    for (const value of filter[key] ?? []) query.push([key, value]);
  }
  return query;
}

function commentForm(comment: string | undefined): Query | undefined {
  return comment ? [['comment', comment]] : undefined;
}

/**
 * MAAS reads `ip_addresses` as ONE space-separated value (a repeated field keeps only the last),
 * and an empty value deletes every A/AAAA record: the PCP-6608 wipe. So an empty set is refused here.
 */
export function dnsIpValue(id: number, ips: string[]): string {
  const cleaned = [...new Set(ips.map((ip) => ip.trim()).filter((ip) => ip.length > 0))];
  if (cleaned.length === 0) {
    throw new ChatopsError('GUARD_REFUSED', `refused to set DNS resource ${id} to no addresses: that would delete every A/AAAA record`, {
      hint: 'An empty set is never written; if the record must really go, delete it in MAAS by hand',
    });
  }
  const bad = cleaned.filter((ip) => isIP(ip) === 0);
  if (bad.length > 0) {
    throw new ChatopsError('GUARD_REFUSED', `refused to set DNS resource ${id}: not IP addresses: ${bad.join(', ')}`, {
      hint: 'Give plain IPv4 or IPv6 addresses',
    });
  }
  return cleaned.join(' ');
}

/**
 * Both flags always go, and managed when the caller read it: the PUT states every flag it relies on
 * (MAAS keeps an omitted one on update; its "defaults to true" is for create). As `true`/`false`:
 * up to 3.4 every flag is a Django BooleanField, which reads only "false" (any case) and "" as
 * false, so `0` turns a flag ON (forms/subnet.py; recorded on 3.4.10, rows bool-0, managed-0);
 * from 3.5 allow_dns/allow_proxy read only "true", "t", "1" as true. `true`/`false` mean the same to both.
 */
export function subnetDnsForm(update: SubnetDnsUpdate): Query {
  const form: Query = [
    ['dns_servers', update.dns_servers.join(' ')],
    ['allow_dns', formBoolean(update.allow_dns)],
    ['allow_proxy', formBoolean(update.allow_proxy)],
  ];
  if (update.managed !== undefined) form.push(['managed', formBoolean(update.managed)]);
  return form;
}

function formBoolean(value: boolean): 'true' | 'false' {
  return value ? 'true' : 'false';
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function networkCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  if (err instanceof AggregateError) return networkCode(err.errors[0]);
  return networkCode(err.cause);
}

function describeNetworkError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describeNetworkError(err.errors[0]);
  if (err instanceof Error) {
    const code = networkCode(err);
    const message = err.message || code || err.name;
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}

function formatBytes(bytes: number, rounded = false): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  return rounded ? `${mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
