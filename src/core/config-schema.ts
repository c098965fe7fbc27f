import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration.ts';

/** Names that become part of commands, keys and messages: no shell or markup characters. */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** A DNS name or IPv4/IPv6 address, as accepted for hosts. */
export const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[?[0-9A-Fa-f:.]+\]?)$/;
const ZONE_RE = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?\.?)+$/;
const CIDR_RE = /^[0-9A-Fa-f:.]+\/\d{1,3}$/;

/** An IPv4 address with a prefix of 0–32, or an IPv6 one with 0–128. */
function isCidr(value: string): boolean {
  if (!CIDR_RE.test(value)) return false;
  const [address, prefix] = value.split('/') as [string, string];
  const family = isIP(address);
  return family !== 0 && Number(prefix) <= (family === 4 ? 32 : 128);
}
const cidr = (example: string) => z.string().refine(isCidr, `must be a CIDR such as ${example}: an IP address, a slash and a prefix length (0–32 for IPv4, 0–128 for IPv6)`);

const name = z.string().regex(NAME_RE, 'must be letters, digits, ".", "_" or "-" (at most 63)');
const host = z.string().regex(HOST_RE, 'must be a host name or an IP address');
const labelName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be a Prometheus label name');
const secretRef = z.string().min(1, 'must not be empty');
const duration = z
  .string()
  .refine((s) => parseDuration(s) !== null, 'must be a duration such as 30s, 5m or 1h');
const hostKey = z
  .string()
  .regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'must be a fingerprint as `ssh-keygen -lf` prints it: SHA256: then 43 base64 characters');
const port = z.number().int().min(1).max(65535);

export const sshEndpointSchema = z.strictObject({
  host: host.optional(),
  port: port.optional(),
  user: name.optional(),
  privateKey: secretRef.optional(),
  hostKey: hostKey.optional(),
});

const resolverSchema = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'must be an address, optionally with :port');

export const rackSchema = z.strictObject({
  resolver: resolverSchema,
  zone: z.string().regex(ZONE_RE, 'must be a DNS zone name').default('maas-internal'),
  probe: z.enum(['ssh', 'direct']).default('ssh'),
  ssh: sshEndpointSchema.optional(),
  forwarder: resolverSchema.optional(),
  forwarderInstall: z.string().min(1).max(1000).refine((s) => !/[\r\n\0]/.test(s), 'must be one line').optional(),
  subnet: z.union([cidr('10.20.0.0/24'), z.number().int()]).optional(),
  /** Where MAAS wrote the rack's dhcpd.conf; default: the snap's, then the deb's path. */
  dhcpdConfig: z.string().regex(/^\/[A-Za-z0-9._/-]{1,255}$/, 'must be an absolute path (letters, digits and . _ - /), such as /var/snap/maas/common/maas/dhcpd.conf').optional(),
  /** fix-resolver: a machine (MAAS hostname) commissioned after the subnet change, to prove it. */
  canary: name.optional(),
});

export const siteSchema = z.strictObject({
  maas: name,
  machines: z
    .strictObject({ zone: name.optional(), pool: name.optional(), tags: z.array(name).optional() })
    .default({}),
  rack: rackSchema.optional(),
  vmHosts: z.record(z.union([z.literal('default'), host]), sshEndpointSchema).default({}),
  knownHosts: secretRef.optional(),
  /** vmHosts: one SSH session per VM host runs `virsh event`; a domain defined or undefined runs mac-diff at once. */
  watch: z.strictObject({ vmHosts: z.boolean().default(false) }).optional(),
});

export const clusterSchema = z.strictObject({
  maas: name,
  kube: z
    .strictObject({
      kubeconfig: secretRef.optional(),
      context: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@:/-]{0,252}$/, 'must be a kubeconfig context name (letters, digits and . _ @ : / -)').optional(),
      namespace: name.default('default'),
    })
    .default({ namespace: 'default' }),
  maasCluster: name.optional(),
  preferredSubnets: z.array(cidr('10.11.135.0/24')).optional(),
  controller: z
    .strictObject({ namespace: name.default('capmaas-system'), deployment: name.default('capmaas-controller-manager') })
    .optional(),
  /** Where dns-check asks what clients get for the API name: a resolver, from the bot or from a site's rack. */
  clientView: z
    .strictObject({
      resolver: resolverSchema,
      via: z.enum(['direct', 'rack']).default('direct'),
      site: name.optional(),
    })
    .optional(),
});

/** Slack ids as the API sends them: a name such as #ops or @alice never matches, so it would lock everyone out. */
const channelId = z.string().regex(/^[CGD][A-Z0-9]{2,20}$/, 'must be a Slack channel id such as C0123ABCD (not a #name): open the channel details in Slack, the id is at the bottom');
/** A person, or a user group (S…) standing for its current members. */
const userOrGroup = z.string().regex(/^[UWS][A-Z0-9]{2,20}$/, "must be a Slack user id such as U0123ABCD or a user group id such as S0123ABCD (not a @name): open the person's profile, ⋮, Copy member ID; for a group, its id is in the group's URL");

export const configSchema = z.strictObject({
  slack: z
    .strictObject({
      alertChannel: channelId.optional(),
      commandChannels: z.array(channelId).default([]),
      operators: z.array(userOrGroup).optional(),
      approvers: z.array(userOrGroup).default([]),
      selfApproval: z.boolean().default(false),
      /** How long a user group's members, once read, stand for the group. */
      userGroupCacheTtl: duration.default('5m'),
      approvalTtl: duration.default('15m'),
      /** Distinct approvers a plan needs before it runs; per repair in approvalsRequiredFor. */
      approvalsRequired: z.number().int().min(1).max(5).default(1),
      approvalsRequiredFor: z.record(z.string().regex(/^fix-[a-z][a-z-]*$/, 'must be a repair command such as fix-dns'), z.number().int().min(1).max(5)).optional(),
      /** Which operators may run which kind of subcommand; an absent list = every operator. */
      permissions: z.strictObject({ checks: z.array(userOrGroup).optional(), repairs: z.array(userOrGroup).optional() }).optional(),
    })
    .default({ commandChannels: [], approvers: [], selfApproval: false, userGroupCacheTtl: '5m', approvalTtl: '15m', approvalsRequired: 1 }),
  maas: z.record(name, z.strictObject({ url: z.url({ protocol: /^https?$/ }), apiKey: secretRef })).default({}),
  sites: z.record(name, siteSchema).default({}),
  clusters: z.record(name, clusterSchema).default({}),
  schedules: z
    .strictObject({ dns: duration.optional(), resolver: duration.optional(), macs: duration.optional() })
    .default({}),
  /** Watching the management cluster: a changed DNS hash or a stopped control plane runs dns-check at once. */
  watch: z
    .strictObject({
      clusters: z.boolean().default(true),
      debounce: duration.default('500ms'),
      silentAfter: duration.default('150s'),
      relistEvery: duration.default('15m'),
    })
    .default({ clusters: true, debounce: '500ms', silentAfter: '150s', relistEvery: '15m' }),
  /** POST /alertmanager: which alerts run which check on which target (checks only, never repairs). */
  alertmanager: z
    .strictObject({
      routes: z
        .array(
          z
            .strictObject({
              match: z.record(labelName, z.string().max(1024)).refine((m) => Object.keys(m).length > 0, 'must name at least one label'),
              check: name,
              target: name.optional(),
              targetLabel: labelName.optional(),
            })
            .refine((r) => (r.target === undefined) !== (r.targetLabel === undefined), 'needs exactly one of target (a fixed site or cluster) or targetLabel (the label that names it)'),
        )
        .default([]),
      /** Identical groups within this window run one check (Alertmanager resends, and an HA pair sends twice). */
      window: duration.default('2m'),
    })
    .optional(),
  repair: z
    .strictObject({
      maxSubjects: z.number().int().min(1).max(10_000).default(50),
      /** fix-macs follows a re-commissioning this long (default 40m, above MAAS's 30-minute node_timeout). */
      commissionTimeout: duration.optional(),
      /** How often it reads the machine meanwhile (default 15s). */
      commissionPollInterval: duration.optional(),
    })
    .default({ maxSubjects: 50 }),
  /** How much one worker does at once: the targets of an `all`, the VM hosts one mac-diff reads. */
  concurrency: z
    .strictObject({
      targets: z.number().int().min(1).max(256).optional(),
      vmHosts: z.number().int().min(1).max(1024).optional(),
    })
    .default({}),
  audit: z
    .strictObject({
      /** The Redis stream; default `<BullMQ prefix>:audit`. */
      key: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,199}$/, 'must be a Redis key of letters, digits, ":", ".", "_" or "-"').optional(),
      maxEntries: z.number().int().min(100).max(10_000_000).default(10_000),
    })
    .default({ maxEntries: 10_000 }),
  /** Redis Sentinel for the queues; REDIS_URL or REDIS_SENTINELS in the environment take precedence over this block. */
  redis: z
    .strictObject({
      sentinels: z.array(z.string().regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):\d{1,5}$/, 'must be host:port')).min(1, 'must list at least one sentinel'),
      sentinelName: name,
      sentinelUsername: name.optional(),
      sentinelPassword: secretRef.optional(),
      username: name.optional(),
      password: secretRef.optional(),
      tlsCa: z.string().min(1).optional(),
      db: z.number().int().min(0).max(15).optional(),
    })
    .optional(),
});

export type RawConfig = z.infer<typeof configSchema>;
