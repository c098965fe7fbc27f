import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { configSchema } from '../../src/core/config-schema.ts';
import { redisSettingsFrom } from '../../src/engine/queue/redis-settings.ts';
import { DEFAULT_CONTROLLER_DEPLOYMENT, DEFAULT_CONTROLLER_NAMESPACE, PREFERRED_SUBNET_CONFIGMAP } from '../../src/adapters/kube/capmaas.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML */
type Manifest = Record<string, any> & { kind: string; apiVersion: string; metadata: { name: string; namespace?: string } };

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const NAMESPACE = 'maas-chatops';
const SERVICE_ACCOUNT = 'maas-chatops';

const files = readdirSync(DEPLOY).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const manifests: (Manifest & { file: string })[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8')).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return { ...(doc.toJS() as Manifest), file };
  }),
);
const all = (kind: string) => manifests.filter((m) => m.kind === kind);
const one = (kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/`);
  return found;
};
const workloads = () => manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'StatefulSet');
const containerOf = (m: Manifest) => m.spec.template.spec.containers[0];

describe('deploy/ manifests', () => {
  it('parse, and hold only the kinds the bot needs', () => {
    expect(manifests.length).toBeGreaterThan(10);
    const kinds = new Set(manifests.map((m) => m.kind));
    expect([...kinds].sort()).toEqual(
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'Deployment',
        'Namespace',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Role',
        'RoleBinding',
        'Secret',
        'Service',
        'ServiceAccount',
        'StatefulSet',
      ].sort(),
    );
    for (const m of manifests) {
      expect(m.apiVersion, `${m.file} ${m.kind}`).toBeTruthy();
      expect(m.metadata?.name, `${m.file} ${m.kind}`).toBeTruthy();
    }
  });

  it('kustomization.yaml lists every manifest file once', () => {
    const kustomization = parse(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it('puts everything in the maas-chatops namespace, except the Role that reads the controller', () => {
    expect(one('Namespace', NAMESPACE)).toBeTruthy();
    for (const m of manifests) {
      if (['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(m.kind)) {
        expect(m.metadata.namespace, `${m.kind} ${m.metadata.name}`).toBeUndefined();
      } else if (m.kind === 'Role' || m.kind === 'RoleBinding') {
        expect(m.metadata.namespace).toBe(DEFAULT_CONTROLLER_NAMESPACE);
      } else {
        expect(m.metadata.namespace, `${m.kind} ${m.metadata.name}`).toBe(NAMESPACE);
      }
    }
  });

  it('runs the bot (one replica) and the workers (two) from the same image', () => {
    const bot = one('Deployment', 'maas-chatops-bot');
    const worker = one('Deployment', 'maas-chatops-worker');
    expect(containerOf(bot).args).toEqual(['bot']);
    expect(containerOf(worker).args).toEqual(['worker']);
    expect(bot.spec.replicas).toBe(1);
    expect(worker.spec.replicas).toBe(2);
    expect(containerOf(bot).image).toBe(containerOf(worker).image);
    for (const d of [bot, worker]) {
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
      expect(d.spec.template.spec.serviceAccountName).toBe(SERVICE_ACCOUNT);
    }
    // Only the worker talks to the Kubernetes API.
    expect(bot.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(worker.spec.template.spec.automountServiceAccountToken).toBe(true);
  });

  it('probes /healthz (liveness) and /readyz (readiness) on the named HTTP port', () => {
    for (const name of ['maas-chatops-bot', 'maas-chatops-worker']) {
      const c = containerOf(one('Deployment', name));
      const http = c.ports.find((p: any) => p.name === 'http');
      expect(http?.containerPort).toBe(3000);
      expect(c.env.find((e: any) => e.name === 'PORT')?.value).toBe(String(http.containerPort));
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(c.startupProbe.httpGet.path).toBe('/healthz');
    }
    const redis = containerOf(one('StatefulSet', 'redis'));
    expect(redis.livenessProbe).toBeTruthy();
    expect(redis.readinessProbe).toBeTruthy();
  });

  it('gives every container requests and limits, a non-root user and a read-only root filesystem', () => {
    expect(workloads()).toHaveLength(3);
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      const where = `${w.kind} ${w.metadata.name}`;
      expect(pod.securityContext.runAsNonRoot, where).toBe(true);
      expect(pod.securityContext.runAsUser, where).toBeGreaterThan(0);
      expect(pod.securityContext.seccompProfile, where).toEqual({ type: 'RuntimeDefault' });
      expect(pod.hostNetwork ?? false, where).toBe(false);
      for (const c of pod.containers) {
        expect(c.resources.requests.cpu, where).toBeTruthy();
        expect(c.resources.requests.memory, where).toBeTruthy();
        expect(c.resources.limits.memory, where).toBeTruthy();
        expect(c.securityContext.readOnlyRootFilesystem, where).toBe(true);
        expect(c.securityContext.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext.capabilities.drop, where).toEqual(['ALL']);
        expect(c.securityContext.privileged ?? false, where).toBe(false);
        expect(c.securityContext.runAsUser ?? pod.securityContext.runAsUser, where).not.toBe(0);
      }
    }
  });

  it('mounts only volumes that exist, backed by objects that exist', () => {
    for (const w of workloads()) {
      const pod = w.spec.template.spec;
      const claimed = new Set((w.spec.volumeClaimTemplates ?? []).map((t: any) => t.metadata.name));
      const volumes = new Map<string, any>((pod.volumes ?? []).map((v: any) => [v.name, v]));
      for (const c of pod.containers) {
        for (const mount of c.volumeMounts ?? []) {
          expect(volumes.has(mount.name) || claimed.has(mount.name), `${w.metadata.name}: ${mount.name}`).toBe(true);
        }
        for (const from of c.envFrom ?? []) expect(one('Secret', from.secretRef.name)).toBeTruthy();
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) expect(one('Secret', ref.name).stringData).toHaveProperty(ref.key);
        }
      }
      for (const v of volumes.values()) {
        if (v.configMap) expect(one('ConfigMap', v.configMap.name)).toBeTruthy();
        if (v.secret) expect(one('Secret', v.secret.secretName)).toBeTruthy();
      }
    }
  });

  it('ships a config that validates and whose secret references resolve to the Secrets', () => {
    const cm = one('ConfigMap', 'maas-chatops-config');
    const raw = parse(cm.data['maas-chatops.yaml']);
    const result = configSchema.safeParse(raw);
    expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);

    const bot = containerOf(one('Deployment', 'maas-chatops-bot'));
    const worker = containerOf(one('Deployment', 'maas-chatops-worker'));
    const configPath = worker.env.find((e: any) => e.name === 'MAAS_CHATOPS_CONFIG').value as string;
    for (const c of [bot, worker]) {
      const mount = c.volumeMounts.find((m: any) => m.name === 'config');
      expect(`${mount.mountPath}/maas-chatops.yaml`).toBe(configPath);
    }

    const text = cm.data['maas-chatops.yaml'] as string;
    const envNames = [...text.matchAll(/env:([A-Z0-9_]+)/g)].map((m) => m[1]);
    const fileNames = [...text.matchAll(/file:\/secrets\/([A-Za-z0-9_.-]+)/g)].map((m) => m[1]);
    expect(envNames.length).toBeGreaterThan(0);
    expect(fileNames.length).toBeGreaterThan(0);
    const envSecret = one('Secret', 'maas-chatops-env').stringData;
    const sshSecret = one('Secret', 'maas-chatops-ssh').stringData;
    for (const name of envNames) expect(envSecret, name).toHaveProperty(name as string);
    for (const name of fileNames) expect(sshSecret, name).toHaveProperty(name as string);
    const sshMount = worker.volumeMounts.find((m: any) => m.name === 'ssh');
    expect(sshMount).toMatchObject({ mountPath: '/secrets', readOnly: true });
  });

  it('holds only placeholders in its Secrets', () => {
    for (const secret of all('Secret')) {
      for (const [key, value] of Object.entries(secret.stringData as Record<string, string>)) {
        expect(value, `${secret.metadata.name}.${key}`).toMatch(/^REPLACE_ME/);
      }
      expect(secret.data, secret.metadata.name).toBeUndefined();
    }
  });

  it('listens on HOST and serves /metrics on its own METRICS_PORT, which the scrape annotations name and no Service exposes', () => {
    for (const name of ['maas-chatops-bot', 'maas-chatops-worker']) {
      const d = one('Deployment', name);
      const c = containerOf(d);
      const env = (key: string) => c.env.find((e: any) => e.name === key)?.value;
      const metrics = c.ports.find((p: any) => p.name === 'metrics');
      expect(env('HOST'), name).toBe('0.0.0.0');
      expect(env('METRICS_PORT'), name).toBe(String(metrics?.containerPort));
      expect(env('METRICS_PORT'), name).not.toBe(env('PORT'));
      expect(d.spec.template.metadata.annotations['prometheus.io/port'], name).toBe(env('METRICS_PORT'));
      expect(d.spec.template.metadata.annotations['prometheus.io/path'], name).toBe('/metrics');
    }
    for (const svc of all('Service')) {
      expect(svc.spec.ports.map((p: any) => p.targetPort), svc.metadata.name).not.toContain('metrics');
    }
  });

  it('serves the bot HTTP port through a Service that selects the bot pods', () => {
    const svc = one('Service', 'maas-chatops-bot');
    const bot = one('Deployment', 'maas-chatops-bot');
    expect(bot.spec.template.metadata.labels).toMatchObject(svc.spec.selector);
    expect(svc.spec.ports).toEqual([expect.objectContaining({ targetPort: 'http' })]);
  });

  it('runs Redis with noeviction and append-only persistence on a volume', () => {
    const conf = one('ConfigMap', 'maas-chatops-redis').data['redis.conf'] as string;
    const settings = new Map(
      conf
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => [l.split(/\s+/)[0], l.split(/\s+/).slice(1).join(' ')] as const),
    );
    expect(settings.get('maxmemory-policy')).toBe('noeviction');
    expect(settings.get('appendonly')).toBe('yes');
    expect(settings.get('dir')).toBe('/data');
    const redis = one('StatefulSet', 'redis');
    const c = containerOf(redis);
    expect(c.command.slice(0, 2)).toEqual(['redis-server', '/etc/redis/redis.conf']);
    expect(c.volumeMounts).toContainEqual(expect.objectContaining({ name: 'data', mountPath: '/data' }));
    expect(redis.spec.volumeClaimTemplates[0].metadata.name).toBe('data');
    expect(one('Service', 'redis').spec.ports[0].port).toBe(6379);
    for (const name of ['maas-chatops-bot', 'maas-chatops-worker']) {
      const url = containerOf(one('Deployment', name)).env.find((e: any) => e.name === 'REDIS_URL').value as string;
      expect(url).toBe('redis://:$(REDIS_PASSWORD)@redis:6379');
    }
  });
});

describe('deploy/ RBAC', () => {
  /** One grant per (scope, apiGroup, resource, resourceName, verb). */
  function grants(): string[] {
    const out: string[] = [];
    for (const role of [...all('ClusterRole'), ...all('Role')]) {
      const scope = role.kind === 'ClusterRole' ? 'cluster' : `ns:${role.metadata.namespace}`;
      expect(role.aggregationRule, role.metadata.name).toBeUndefined();
      for (const rule of role.rules as any[]) {
        expect(rule.nonResourceURLs, role.metadata.name).toBeUndefined();
        for (const group of rule.apiGroups)
          for (const resource of rule.resources)
            for (const name of rule.resourceNames ?? ['*'])
              for (const verb of rule.verbs) out.push(`${scope} ${group || 'core'} ${resource} ${name} ${verb}`);
      }
    }
    return out.sort();
  }

  it('grants exactly: get/list/watch maasclusters and maasmachines, patch maasclusters, get the preferred-subnet ConfigMap and the controller Deployment', () => {
    const expected = [
      'cluster infrastructure.cluster.x-k8s.io maasclusters * get',
      'cluster infrastructure.cluster.x-k8s.io maasclusters * list',
      'cluster infrastructure.cluster.x-k8s.io maasclusters * patch',
      'cluster infrastructure.cluster.x-k8s.io maasclusters * watch',
      'cluster infrastructure.cluster.x-k8s.io maasmachines * get',
      'cluster infrastructure.cluster.x-k8s.io maasmachines * list',
      'cluster infrastructure.cluster.x-k8s.io maasmachines * watch',
      `cluster core configmaps ${PREFERRED_SUBNET_CONFIGMAP} get`,
      `ns:${DEFAULT_CONTROLLER_NAMESPACE} apps deployments ${DEFAULT_CONTROLLER_DEPLOYMENT} get`,
    ].sort();
    expect(grants()).toEqual(expected);
  });

  it('binds each role to the bot ServiceAccount only, and every binding to a role defined here', () => {
    expect(one('ServiceAccount', SERVICE_ACCOUNT).metadata.namespace).toBe(NAMESPACE);
    const bindings = [...all('ClusterRoleBinding'), ...all('RoleBinding')];
    expect(bindings).toHaveLength(2);
    for (const b of bindings) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: NAMESPACE }]);
      const role = one(b.roleRef.kind, b.roleRef.name);
      if (b.kind === 'RoleBinding') expect(role.metadata.namespace).toBe(b.metadata.namespace);
      else expect(b.roleRef.kind).toBe('ClusterRole');
    }
    const bound = new Set(bindings.map((b) => `${b.roleRef.kind}/${b.roleRef.name}`));
    for (const role of [...all('ClusterRole'), ...all('Role')]) expect(bound.has(`${role.kind}/${role.metadata.name}`)).toBe(true);
  });
});

describe('deploy/sentinel: the Sentinel variant', () => {
  const SENTINEL = join(DEPLOY, 'sentinel');
  const component = parse(readFileSync(join(SENTINEL, 'kustomization.yaml'), 'utf8')) as { kind: string; patches: ({ path: string } | { patch: string })[] };
  const envPatches = parseAllDocuments(readFileSync(join(SENTINEL, 'redis-env.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
  const envOf = (m: Manifest) => containerOf(m).env as { name: string; value?: string; $patch?: string }[];

  it('is a kustomize Component that the base kustomization names, commented out', () => {
    expect(component.kind).toBe('Component');
    expect(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')).toMatch(/^# components: \[sentinel\]$/m);
  });

  it('gives the bot and the workers REDIS_SENTINELS, REDIS_SENTINEL_NAME and the ACL user instead of REDIS_URL', () => {
    const patched = envPatches.map((m) => m.metadata.name).sort();
    expect(patched).toEqual(['maas-chatops-bot', 'maas-chatops-worker']);
    for (const m of envPatches) {
      // The patch names the container of the base manifest, or it would add a second one.
      expect(containerOf(m).name).toBe(containerOf(one('Deployment', m.metadata.name)).name);
      const env = envOf(m);
      expect(env.find((e) => e.name === 'REDIS_URL')?.$patch).toBe('delete');
      const values = Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
      // What the container gets is a setting the bot accepts (REDIS_PASSWORD comes from the Secret).
      const { settings } = redisSettingsFrom({ ...values, REDIS_PASSWORD: 'from-the-secret' });
      expect(settings).toMatchObject({ mode: 'sentinel', name: 'mymaster', username: 'maas-chatops', password: 'from-the-secret' });
      expect((settings as { sentinels: unknown[] }).sentinels).toHaveLength(3);
    }
  });

  it('drops every object of the bundled redis.yaml, and nothing else', () => {
    const deleted = component.patches
      .filter((p): p is { patch: string } => 'patch' in p)
      .map((p) => parse(p.patch) as Manifest & { $patch: string })
      .map((m) => {
        expect(m.$patch).toBe('delete');
        return `${m.kind}/${m.metadata.name}`;
      });
    const bundled = manifests.filter((m) => m.file === 'redis.yaml').map((m) => `${m.kind}/${m.metadata.name}`);
    expect(deleted.sort()).toEqual(bundled.sort());
  });

  it('the Secret names the sentinels\' password for this variant', () => {
    expect(readFileSync(join(DEPLOY, 'secret.yaml'), 'utf8')).toContain('REDIS_SENTINEL_PASSWORD');
  });
});
