import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CAPMAAS_GROUP, CAPMAAS_VERSION, MAAS_CLUSTER_PLURAL, MAAS_MACHINE_PLURAL } from '../../src/adapters/kube/capmaas.ts';
import type { MaasClusterObject, MaasMachineObject } from '../../src/adapters/kube/types.ts';
import { matchesLabelSelector, parseLabelSelector } from './label-selector.ts';
import { mergePatch } from './merge-patch.ts';
import { WatchHub, type WatchEventType } from './watch-hub.ts';

/**
 * A Kubernetes API server on loopback, serving the paths @kubernetes/client-node 2.x builds
 * for the reads the DNS check makes (CustomObjectsApi, CoreV1Api.readNamespacedConfigMap,
 * AppsV1Api.readNamespacedDeployment), the merge patch of a MaasCluster, and list-then-watch of
 * MaasClusters and MaasMachines (watch-hub.ts) for the informers. Like the API
 * server it authenticates (401), then authorizes (403), then looks the object up (404), and
 * answers failures with Status objects.
 */

export interface ConfigMapState {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

export interface DeploymentState {
  namespace: string;
  name: string;
  containers: { name: string; image: string }[];
}

export interface KubeSimState {
  maasClusters: MaasClusterObject[];
  maasMachines: MaasMachineObject[];
  configMaps: ConfigMapState[];
  deployments: DeploymentState[];
}

export interface KubeSimCall {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | null;
  body: unknown;
  status: number;
}

export type Verb = 'get' | 'list' | 'watch' | 'patch';
export type WatchedPlural = typeof MAAS_CLUSTER_PLURAL | typeof MAAS_MACHINE_PLURAL;

export interface ForbidRule {
  verb: Verb;
  /** Plural resource: maasclusters, maasmachines, configmaps, deployments. */
  resource: string;
  /** Absent = every namespace. */
  namespace?: string;
}

export interface KubeSimulator {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly token: string;
  /** The user name the 403 messages name. */
  readonly user: string;
  /** Live state: tests and the lab change it between calls. */
  state: KubeSimState;
  readonly calls: KubeSimCall[];
  /** Added latency before every answer, in ms. */
  latencyMs: number;
  forbid(rule: ForbidRule): void;
  allowAll(): void;
  /** Creates or replaces an object (by namespace and name), as the controller would: a new resourceVersion and a watch event. */
  apply(resource: WatchedPlural, object: MaasClusterObject | MaasMachineObject): void;
  /** Deletes an object: a DELETED watch event. */
  remove(resource: WatchedPlural, namespace: string, name: string): void;
  /** Open watches, history (compact), bookmarks and silence. */
  readonly watches: WatchHub;
  /** The next `count` watch requests (of `resource`, or any) are answered with this status and a Status body, not a stream. */
  failWatches(count: number, status?: number, resource?: WatchedPlural): void;
  /** The next `count` PATCH requests are carried out, then their connection is closed with no answer (a lost answer). */
  dropPatchAnswers(count: number): void;
  close(): Promise<void>;
}

export interface KubeSimOptions {
  state?: Partial<KubeSimState>;
  token?: string;
  user?: string;
}

export async function startKubeSimulator(options: KubeSimOptions = {}): Promise<KubeSimulator> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  const forbidden: ForbidRule[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let resourceVersion = 1000;
  const watches = new WatchHub(() => resourceVersion);
  let watchFailures: { count: number; status: number; resource?: WatchedPlural } = { count: 0, status: 500 };
  let patchAnswersToDrop = 0;

  const sim: KubeSimulator = {
    url: '',
    token,
    user: options.user ?? 'system:serviceaccount:maas-chatops:maas-chatops',
    state: {
      maasClusters: options.state?.maasClusters ?? [],
      maasMachines: options.state?.maasMachines ?? [],
      configMaps: options.state?.configMaps ?? [],
      deployments: options.state?.deployments ?? [],
    },
    calls: [],
    latencyMs: 0,
    forbid: (rule) => void forbidden.push(rule),
    allowAll: () => void forbidden.splice(0),
    apply: (resource, object) => {
      const items = itemsOf(resource);
      const namespace = object.metadata.namespace ?? 'default';
      const stored = structuredClone(object);
      stored.metadata.namespace = namespace;
      stored.metadata.resourceVersion = String(++resourceVersion);
      const at = items.findIndex((o) => (o.metadata.namespace ?? 'default') === namespace && o.metadata.name === object.metadata.name);
      if (at >= 0) items.splice(at, 1, stored);
      else items.push(stored);
      recordEvent(resource, at >= 0 ? 'MODIFIED' : 'ADDED', stored);
    },
    remove: (resource, namespace, name) => {
      const items = itemsOf(resource);
      const at = items.findIndex((o) => (o.metadata.namespace ?? 'default') === namespace && o.metadata.name === name);
      if (at < 0) return;
      const [gone] = items.splice(at, 1);
      if (!gone) return;
      gone.metadata.resourceVersion = String(++resourceVersion);
      recordEvent(resource, 'DELETED', gone);
    },
    watches,
    failWatches: (count, status = 500, resource) => {
      watchFailures = { count, status, ...(resource ? { resource } : {}) };
    },
    dropPatchAnswers: (count) => {
      patchAnswersToDrop = count;
    },
    close: async () => {
      watches.closeAll();
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function itemsOf(resource: WatchedPlural): (MaasClusterObject | MaasMachineObject)[] {
    return resource === MAAS_CLUSTER_PLURAL ? sim.state.maasClusters : sim.state.maasMachines;
  }

  function recordEvent(resource: WatchedPlural, type: WatchEventType, object: MaasClusterObject | MaasMachineObject): void {
    watches.record({ rv: resourceVersion, resource, namespace: object.metadata.namespace ?? 'default', type, object: structuredClone(object) });
  }

  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const answer = () => {
        const answered = handle(req, raw);
        sim.calls.push({
          method: req.method ?? 'GET',
          path: pathOf(req),
          query: queryOf(req),
          contentType: req.headers['content-type'] ?? null,
          body: raw ? safeJson(raw) : null,
          status: answered.status,
        });
        if (req.method === 'PATCH' && patchAnswersToDrop > 0) {
          patchAnswersToDrop--;
          req.socket.destroy();
        } else if ('stream' in answered) answered.stream(res);
        else send(res, answered.status, answered.body);
      };
      if (sim.latencyMs > 0) {
        const t = setTimeout(() => {
          timers.delete(t);
          answer();
        }, sim.latencyMs);
        timers.add(t);
      } else answer();
    });
  });

  type Answer = { status: number; body: unknown } | { status: 200; stream: (res: ServerResponse) => void };

  function handle(req: IncomingMessage, raw: string): Answer {
    if (!authenticated(req.headers.authorization, token)) return statusBody(401, 'Unauthorized', 'Unauthorized');
    const route = routeOf(req.method ?? 'GET', pathOf(req), queryOf(req));
    if (!route) return statusBody(404, 'NotFound', 'the server could not find the requested resource');
    const denied = forbidden.some(
      (r) => r.verb === route.verb && r.resource === route.resource && (r.namespace === undefined || r.namespace === route.namespace),
    );
    if (denied) return forbiddenBody(route, sim.user);
    switch (route.resource) {
      case MAAS_CLUSTER_PLURAL:
      case MAAS_MACHINE_PLURAL:
        return customObject(route, req, raw);
      case 'configmaps':
        return configMap(route);
      case 'deployments':
        return deployment(route);
      default:
        return statusBody(404, 'NotFound', 'the server could not find the requested resource');
    }
  }

  function customObject(route: Route, req: IncomingMessage, raw: string): Answer {
    const isCluster = route.resource === MAAS_CLUSTER_PLURAL;
    const items = itemsOf(route.resource as WatchedPlural);
    const kind = isCluster ? 'MaasCluster' : 'MaasMachine';
    const apiVersion = `${CAPMAAS_GROUP}/${CAPMAAS_VERSION}`;
    // An object put into `state` directly (not through apply) gets its first resourceVersion when first served.
    for (const o of items) o.metadata.resourceVersion ??= String(++resourceVersion);
    const inNamespace = items.filter((o) => (o.metadata.namespace ?? 'default') === route.namespace);
    if (route.verb === 'list' || route.verb === 'watch') {
      const query = queryOf(req);
      const selector = parseLabelSelector(query.labelSelector ?? '');
      if (!selector) return statusBody(400, 'BadRequest', `unable to parse requirement: invalid label selector`);
      if (route.verb === 'watch') {
        if (watchFailures.count > 0 && (watchFailures.resource ?? route.resource) === route.resource) {
          watchFailures.count--;
          return statusBody(watchFailures.status, 'InternalError', 'an error on the server ("simulated") has prevented the request from succeeding');
        }
        const timeout = Number(query.timeoutSeconds);
        return {
          status: 200,
          stream: (res) =>
            watches.serve(
              {
                resource: route.resource,
                namespace: route.namespace,
                kind,
                apiVersion,
                selector,
                resourceVersion: query.resourceVersion ?? '',
                bookmarks: query.allowWatchBookmarks === 'true',
                timeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : null,
                current: () => itemsOf(route.resource as WatchedPlural).filter((o) => (o.metadata.namespace ?? 'default') === route.namespace && matchesLabelSelector(o.metadata.labels ?? {}, selector)),
              },
              res,
            ),
        };
      }
      const matching = inNamespace.filter((o) => matchesLabelSelector(o.metadata.labels ?? {}, selector));
      return {
        status: 200,
        body: {
          apiVersion,
          kind: `${kind}List`,
          metadata: { resourceVersion: String(resourceVersion) },
          items: matching.map((o) => served(o, apiVersion, kind)),
        },
      };
    }
    const object = inNamespace.find((o) => o.metadata.name === route.name);
    if (!object) return notFound(route);
    if (route.verb === 'get') return { status: 200, body: served(object, apiVersion, kind) };
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
    if (contentType !== 'application/merge-patch+json') {
      return statusBody(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - the simulator accepts application/merge-patch+json (got ${contentType || 'none'})`,
      );
    }
    const patch = safeJson(raw);
    if (patch === null || typeof patch !== 'object') return statusBody(400, 'BadRequest', 'the patch is not a JSON object');
    const patched = mergePatch(object, patch) as MaasClusterObject;
    patched.metadata.resourceVersion = String(++resourceVersion);
    items.splice(items.indexOf(object), 1, patched);
    recordEvent(route.resource as WatchedPlural, 'MODIFIED', patched);
    return { status: 200, body: served(patched, apiVersion, kind) };
  }

  function configMap(route: Route): { status: number; body: unknown } {
    const cm = sim.state.configMaps.find((c) => c.namespace === route.namespace && c.name === route.name);
    if (!cm) return notFound(route);
    return {
      status: 200,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm.name, namespace: cm.namespace, resourceVersion: '1' }, data: cm.data },
    };
  }

  function deployment(route: Route): { status: number; body: unknown } {
    const d = sim.state.deployments.find((x) => x.namespace === route.namespace && x.name === route.name);
    if (!d) return notFound(route);
    const labels = { 'control-plane': 'controller-manager' };
    return {
      status: 200,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: d.name, namespace: d.namespace, resourceVersion: '1' },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: d.containers } },
        },
      },
    };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (sim as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sim;
}

interface Route {
  verb: Verb;
  group: string;
  resource: string;
  namespace: string;
  name?: string;
}

const CUSTOM_PATH = new RegExp(`^/apis/${CAPMAAS_GROUP.replace(/\./g, '\\.')}/${CAPMAAS_VERSION}/namespaces/([^/]+)/(${MAAS_CLUSTER_PLURAL}|${MAAS_MACHINE_PLURAL})(?:/([^/]+))?$`);
const CONFIGMAP_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps\/([^/]+)$/;
const DEPLOYMENT_PATH = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/]+)$/;

/** A GET of a collection with watch=true (or 1) is the `watch` verb, as RBAC sees it. */
function routeOf(method: string, path: string, query: Record<string, string>): Route | null {
  const custom = CUSTOM_PATH.exec(path);
  if (custom) {
    const [, namespace, resource, name] = custom.map((s) => (s === undefined ? s : decodeURIComponent(s)));
    if (!namespace || !resource) return null;
    const watching = query.watch === 'true' || query.watch === '1';
    if (method === 'GET') return { verb: name ? 'get' : watching ? 'watch' : 'list', group: CAPMAAS_GROUP, resource, namespace, ...(name ? { name } : {}) };
    if (method === 'PATCH' && name) return { verb: 'patch', group: CAPMAAS_GROUP, resource, namespace, name };
    return null;
  }
  for (const [re, group, resource] of [
    [CONFIGMAP_PATH, '', 'configmaps'],
    [DEPLOYMENT_PATH, 'apps', 'deployments'],
  ] as const) {
    const m = re.exec(path);
    if (m && method === 'GET') return { verb: 'get', group, resource, namespace: decodeURIComponent(m[1] ?? ''), name: decodeURIComponent(m[2] ?? '') };
  }
  return null;
}

function served<T extends { metadata: object }>(object: T, apiVersion: string, kind: string): T & { apiVersion: string; kind: string } {
  return { apiVersion, kind, ...structuredClone(object) };
}

function qualified(route: Route): string {
  return route.group ? `${route.resource}.${route.group}` : route.resource;
}

function notFound(route: Route): { status: number; body: unknown } {
  return statusBody(404, 'NotFound', `${qualified(route)} "${route.name}" not found`, {
    name: route.name,
    group: route.group,
    kind: route.resource,
  });
}

function forbiddenBody(route: Route, user: string): { status: number; body: unknown } {
  const object = route.name ? `${qualified(route)} "${route.name}"` : qualified(route);
  return statusBody(
    403,
    'Forbidden',
    `${object} is forbidden: User "${user}" cannot ${route.verb} resource "${route.resource}" in API group "${route.group}" in the namespace "${route.namespace}"`,
    { ...(route.name ? { name: route.name } : {}), group: route.group, kind: route.resource },
  );
}

function statusBody(code: number, reason: string, message: string, details?: Record<string, unknown>): { status: number; body: unknown } {
  return {
    status: code,
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code },
  };
}

function authenticated(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m?.[1]) return false;
  const given = Buffer.from(m[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://sim').pathname;
}

function queryOf(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(new URL(req.url ?? '/', 'http://sim').searchParams);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
