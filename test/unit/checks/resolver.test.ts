import { describe, expect, it } from 'vitest';
import { evaluateResolver } from '../../../src/features/resolver/evaluate.ts';
import type { ResolverObservation, ResolverSnapshot } from '../../../src/features/resolver/types.ts';
import { statusOf } from '../../../src/core/report.ts';

const SOA = { mname: 'ns1.maas-internal.', rname: 'hostmaster.maas-internal.', serial: 2024010101, refresh: 1200, retry: 180, expire: 1209600, minimum: 600 };
const SERVFAIL_LINE = ';; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 43964';

function snapshot(observation: ResolverObservation, extra: Partial<ResolverSnapshot> = {}): ResolverSnapshot {
  return {
    site: 'site-b',
    resolver: '10.20.0.2',
    zone: 'maas-internal',
    probedBy: 'dig on the rack (ops@10.20.0.2) over SSH',
    command: 'dig @10.20.0.2 -p 53 maas-internal SOA +time=2 +tries=1',
    forwarder: '10.20.0.53',
    observation,
    ...extra,
  };
}

function reply(status: string, soa: typeof SOA | null = null): ResolverObservation {
  return { outcome: 'reply', status, statusLine: `;; ->>HEADER<<- opcode: QUERY, status: ${status}, id: 1`, soa };
}

describe('evaluateResolver', () => {
  it.each([
    ['healthy: NOERROR with the SOA', reply('NOERROR', SOA), 'RESOLVER_OK', 'info', /^The resolver of site-b \(10\.20\.0\.2\) answers maas-internal, SOA serial 2024010101$/],
    ['SERVFAIL (the isolated maas-agent resolver)', { outcome: 'reply', status: 'SERVFAIL', statusLine: SERVFAIL_LINE, soa: null } as const, 'RESOLVER_SERVFAIL', 'critical', /^The resolver of site-b \(10\.20\.0\.2\) answers SERVFAIL for its own zone maas-internal$/],
    ['NOERROR without the SOA', reply('NOERROR'), 'RESOLVER_BAD_ANSWER', 'critical', /NOERROR without the SOA/],
    ['NXDOMAIN for its own zone', reply('NXDOMAIN'), 'RESOLVER_BAD_ANSWER', 'critical', /answers NXDOMAIN/],
    ['REFUSED', reply('REFUSED'), 'RESOLVER_BAD_ANSWER', 'critical', /answers REFUSED/],
    ['no reply (dig exit 9)', { outcome: 'no-reply', detail: ';; communications error to 10.20.0.2#53: timed out' } as const, 'RESOLVER_NO_REPLY', 'critical', /^No reply from the resolver of site-b \(10\.20\.0\.2\) for maas-internal$/],
    ['SSH refused', { outcome: 'failed', reason: 'SSH refused: no host key is pinned for 10.20.0.2; it offered ssh-ed25519 SHA256:abc' } as const, 'PROBE_FAILED', 'error', /^Could not check the resolver of site-b: SSH refused/],
    ['dig missing', { outcome: 'failed', reason: 'dig is not installed on the rack (exit status 127)', fix: 'Install it on the rack: sudo apt-get install bind9-dnsutils' } as const, 'PROBE_FAILED', 'error', /dig is not installed/],
  ])('%s', (_name, observation, code, severity, verdict) => {
    const { verdict: said, findings } = evaluateResolver(snapshot(observation));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ code, severity, subject: 'site-b' });
    expect(said).toMatch(verdict);
    expect(said).toContain('site-b');
    expect(findings[0]?.evidence).toMatchObject({ site: 'site-b', resolver: '10.20.0.2', zone: 'maas-internal', probe: 'dig on the rack (ops@10.20.0.2) over SSH' });
  });

  it('puts the SOA serial in a healthy verdict and its evidence, and the report is ok', () => {
    const { findings } = evaluateResolver(snapshot(reply('NOERROR', SOA)));
    expect(findings[0]?.evidence).toMatchObject({ status: 'NOERROR', serial: 2024010101, soa: SOA });
    expect(statusOf(findings)).toBe('ok');
  });

  it("keeps dig's status line as printed and gives the runbook's fix for SERVFAIL", () => {
    const { findings } = evaluateResolver(snapshot({ outcome: 'reply', status: 'SERVFAIL', statusLine: SERVFAIL_LINE, soa: null }));
    const finding = findings[0];
    expect(finding?.evidence).toMatchObject({ status: 'SERVFAIL', statusLine: SERVFAIL_LINE, command: 'dig @10.20.0.2 -p 53 maas-internal SOA +time=2 +tries=1' });
    expect(finding?.fix).toMatch(/forwarder on the rack/);
    expect(finding?.fix).toMatch(/dns_servers = 10\.20\.0\.53, allow_dns off/);
    expect(finding?.fix).toMatch(/`\/maas fix-resolver site-b`/);
    expect(finding?.summary).toMatch(/commissioning times out/);
    expect(statusOf(findings)).toBe('critical');
  });

  it('asks for rack.forwarder when the fix needs one and none is configured', () => {
    const { findings } = evaluateResolver(snapshot(reply('SERVFAIL'), { forwarder: undefined }));
    expect(findings[0]?.fix).toMatch(/dns_servers = <forwarder>.*Set rack\.forwarder/);
  });

  it('carries the reason and fix of a failed probe, and the report is error', () => {
    const { findings } = evaluateResolver(snapshot({ outcome: 'failed', reason: 'dig is not installed on the rack (exit status 127)', fix: 'Install it on the rack: sudo apt-get install bind9-dnsutils' }));
    expect(findings[0]).toMatchObject({ evidence: { reason: 'dig is not installed on the rack (exit status 127)' }, fix: expect.stringContaining('bind9-dnsutils') });
    expect(statusOf(findings)).toBe('error');
  });

  it('keeps the error dig printed when nothing replied', () => {
    const detail = ';; communications error to 10.20.0.2#53: timed out';
    expect(evaluateResolver(snapshot({ outcome: 'no-reply', detail })).findings[0]?.evidence).toMatchObject({ error: detail });
  });

  it('describes a direct probe as such', () => {
    const direct = snapshot(reply('SERVFAIL'), { probedBy: "the bot's own resolver (probe: direct)", command: undefined });
    const evidence = evaluateResolver(direct).findings[0]?.evidence;
    expect(evidence).toMatchObject({ probe: "the bot's own resolver (probe: direct)" });
    expect(evidence).not.toHaveProperty('command');
  });
});
