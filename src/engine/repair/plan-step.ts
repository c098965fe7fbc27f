import { z } from 'zod';

/**
 * Every kind of repair step, by its `action`, with the parameters its runner needs. A plan read
 * back from Redis is parsed against these (plan-schema.ts): a step of an unknown kind, or with a
 * parameter missing, mistyped or unexpected, refuses the whole plan before anything runs.
 * Parameters carry names, ids, MACs and IPs only, never a secret.
 */
const text = z.string();
const ips = z.array(z.string());

function step<A extends string, P extends z.ZodRawShape>(action: A, params: P) {
  return z.strictObject({ subject: text, action: z.literal(action), detail: text, params: z.strictObject(params) });
}

const machine = { systemId: text, hostname: text };

/** The subnet fields a PUT sends: dns_servers and allow_dns change; allow_proxy and managed go as read, so the PUT states every flag. */
export const subnetDnsStateSchema = z.strictObject({ dns_servers: ips, allow_dns: z.boolean(), allow_proxy: z.boolean(), managed: z.boolean().optional() });
export type SubnetDnsState = z.infer<typeof subnetDnsStateSchema>;

// fix-macs
export const markBrokenStep = step('mark-broken', { ...machine, status: text, owner: text });
export const setMacStep = step('set-mac', { ...machine, interfaceId: z.number().int(), interface: text, from: text, to: text });
export const commissionStep = step('commission', machine);
/** Plans made by older versions restored a machine with mark_fixed; still runnable. */
export const markFixedStep = step('mark-fixed', machine);

// fix-dns
export const setDnsIpsStep = step('set-dns-ips', { resourceId: z.number().int(), fqdn: text.optional(), from: ips, to: ips });
export const setDnsHashStep = step('set-dns-hash', { namespace: text, maasCluster: text, fqdn: text.optional(), from: text.nullable(), to: text, ips: ips.optional() });

// fix-resolver
export const installForwarderStep = step('install-forwarder', { site: text, forwarder: text, commandSha256: text });
export const verifyForwarderStep = step('verify-forwarder', { site: text, forwarder: text, zone: text });
export const setSubnetDnsStep = step('set-subnet-dns', { subnetId: z.number().int(), cidr: text, from: subnetDnsStateSchema, to: subnetDnsStateSchema });
export const checkDhcpStep = step('check-dhcp', { site: text, subnetId: z.number().int(), cidr: text, expect: ips });
export const checkResolverStep = step('check-resolver', { site: text, forwarder: text, subnetId: z.number().int() });
export const commissionCanaryStep = step('commission-canary', { site: text, ...machine });

export const planStepSchema = z.discriminatedUnion('action', [
  markBrokenStep,
  setMacStep,
  commissionStep,
  markFixedStep,
  setDnsIpsStep,
  setDnsHashStep,
  installForwarderStep,
  verifyForwarderStep,
  setSubnetDnsStep,
  checkDhcpStep,
  checkResolverStep,
  commissionCanaryStep,
]);

/** One step of a repair plan: its kind (`action`) decides the type of its `params`. */
export type PlanStep = z.infer<typeof planStepSchema>;
export type StepAction = PlanStep['action'];
/** The step of one kind: `StepOf<'set-mac'>['params'].interfaceId` is a number. */
export type StepOf<A extends StepAction> = Extract<PlanStep, { action: A }>;

export type MacStep = StepOf<'mark-broken' | 'set-mac' | 'commission' | 'mark-fixed'>;
export type DnsStep = StepOf<'set-dns-ips' | 'set-dns-hash'>;
export type ResolverStep = StepOf<'install-forwarder' | 'verify-forwarder' | 'set-subnet-dns' | 'check-dhcp' | 'check-resolver' | 'commission-canary'>;
