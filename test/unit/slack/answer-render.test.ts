import { describe, expect, it } from 'vitest';
import { blocksText } from '../../../lab/transcript.ts';
import { checkMessage } from '../../../src/edge/slack/message-limits.ts';
import type { Finding, Report } from '../../../src/core/report.ts';
import { ANSWER_LIMITS, renderAnswer } from '../../../src/edge/slack/answer-render.ts';
import { renderEvidence } from '../../../src/edge/slack/evidence-thread.ts';
import { renderReport } from '../../../src/edge/slack/render.ts';
import { findingBrief, MAX_WORDS } from '../../../src/edge/slack/finding-brief.ts';
import { nextStep } from '../../../src/edge/slack/next-step.ts';
import { withDateTokens, withIsoTimes } from '../../../src/edge/slack/slack-dates.ts';

const at = { startedAt: '2026-11-30T12:00:00.000Z', durationMs: 42 };
const fixDns = '`/maas fix-dns prod` puts 10.11.135.36 back on prod-k8s.maas.example and refreshes the hash; upgrade the controller to v4.9.2 or later';
const wiped: Report = {
  kind: 'dns-check',
  target: 'prod',
  status: 'critical',
  verdict: 'API record WIPED, empty-set hash cached',
  findings: [
    { code: 'DNS_RECORD_EMPTY', severity: 'critical', subject: 'prod-k8s.maas.example', summary: 'MAAS DNS resource 41 for prod-k8s.maas.example holds no A/AAAA record: the API server name resolves to nothing', evidence: { fqdn: 'prod-k8s.maas.example', machines: [{ hostname: 'prod-cp-0', powered: true }] }, fix: fixDns },
    { code: 'DNS_EMPTY_HASH_CACHED', severity: 'critical', subject: 'prod-k8s.maas.example', summary: `The last-applied-dns-hash is SHA-256 of the empty set: ${'the controller cached it and '.repeat(12)}has not re-applied it`, evidence: {}, fix: fixDns },
    { code: 'DNS_CONTROLLER_VULNERABLE', severity: 'warning', subject: 'gcr.io/spectro-images-public/release/cluster-api-provider-maas-controller:v0.6.1', summary: 'The controller runs v4.9.1 (PCP-6608): a power-off can wipe the record', evidence: {}, fix: 'upgrade the controller to v4.9.2 or later' },
    { code: 'DNS_CLIENT_VIEW', severity: 'warning', subject: 'prod-k8s.maas.example', summary: 'MAAS record empty, DNS still serving cached answers (TTL left: 297 s): the rack answers 10.11.135.36, seen 2026-11-30 11:58 UTC', evidence: { seenAt: '2026-11-30T11:58:26.500Z' } },
  ],
  ...at,
};

const drift = (i: number): Finding => ({ code: 'MAC_DRIFT', severity: 'critical', subject: `vm-${i}`, summary: `vm-${i} (Ready): MAAS records eth0 as 52:54:00:00:00:01, the live domain has 52:54:00:00:00:02: PXE reaches MAAS as unknown`, evidence: { hostname: `vm-${i}` }, fix: '/maas fix-macs site-c' });
const many: Report = { kind: 'mac-diff', target: 'site-c', status: 'critical', verdict: '300 of 300 machines have drifted MACs', findings: Array.from({ length: 300 }, (_, i) => drift(i)), ...at };
const healthy: Report = { kind: 'resolver-check', target: 'site-a', status: 'ok', verdict: 'The resolver answers', findings: [{ code: 'RESOLVER_OK', severity: 'info', subject: 'site-a', summary: 'answers SOA', evidence: { serial: 1 } }], ...at };

const lines = (r: Report, repairButton = true) => blocksText(renderAnswer(r, { repairButton }).blocks);

describe('the answer in the channel', () => {
  it('is the verdict, one line per finding, one next step and the Plan button, within the limits', () => {
    const shown = lines(wiped);
    expect(shown[0]).toBe(':red_circle: *CRITICAL* · dns-check prod: API record WIPED, empty-set hash cached');
    expect(shown.slice(1, 5).map((l) => /`(\w+)`/.exec(l)?.[1])).toEqual(['DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED', 'DNS_CONTROLLER_VULNERABLE', 'DNS_CLIENT_VIEW']);
    for (const l of shown.slice(1, 5)) expect(l.split(/\s+/).length - 1).toBeLessThanOrEqual(MAX_WORDS + 1);
    // The fix shared by two findings is said once, with the warning's fix it already contains: that warning is covered too.
    expect(shown.filter((l) => l.includes('/maas fix-dns prod'))).toHaveLength(1);
    expect(shown[5]).toBe(`*Next step:* \`/maas fix-dns prod\` puts 10.11.135.36 back on prod-k8s.maas.example and refreshes the hash; upgrade the controller to v4.9.2 or later _(covers DNS_RECORD_EMPTY, DNS_EMPTY_HASH_CACHED, DNS_CONTROLLER_VULNERABLE)_`);
    expect(shown[6]).toBe('[ Plan fix-dns prod ]');
    expect(shown.length).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
    expect(shown.join('\n').length).toBeLessThanOrEqual(ANSWER_LIMITS.maxChars);
  });

  it('shows no button to someone who may not repair, and is two lines when healthy', () => {
    expect(lines(wiped, false).some((l) => l.startsWith('[ '))).toBe(false);
    expect(lines(healthy)).toEqual([':white_check_mark: *OK* · resolver-check site-a: The resolver answers', 'no findings · 1 note · the evidence is in the thread · started 2026-11-30 12:00:00 UTC · took 42 ms']);
  });

  it('counts 297 same-code findings in one line and stays within Slack limits', () => {
    const message = renderAnswer(many, { repairButton: true });
    const shown = blocksText(message.blocks);
    expect(shown.filter((l) => l.includes('`MAC_DRIFT`'))).toHaveLength(4);
    expect(shown).toContain('…and 297 more: `MAC_DRIFT` ×297 (vm-3, vm-4, vm-5, … +294)');
    expect(shown.length).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
    expect(checkMessage(message)).toBeUndefined();
  });

  it('a finding line keeps the clause that says what is wrong, not only the subject', () => {
    expect(findingBrief(drift(1)).brief).toBe('vm-1 (Ready): MAAS records eth0 as 52:54:00:00:00:01, the live domain has 52:54:00:00:00:02');
    // A colon inside brackets is not a clause end.
    expect(findingBrief(wiped.findings[3]!).brief).toBe('MAAS record empty, DNS still serving cached answers (TTL left: 297 s)');
  });

  it('the next step without a repair command is the worst finding\'s fix', () => {
    expect(nextStep({ kind: 'dhcp-check', target: 'site-b', findings: [wiped.findings[2]!] })).toMatchObject({ text: 'upgrade the controller to v4.9.2 or later', covers: [wiped.findings[2]] });
  });
});

describe('the thread under it', () => {
  it('shows a point in time the evidence keeps as Unix seconds (dhcpd.conf written at) as a date token like every other time', () => {
    const served: Report = {
      kind: 'resolver-check', target: 'site-b', status: 'ok', verdict: 'The resolver of site-b answers', startedAt: '2026-11-30T12:00:00.000Z', durationMs: 5,
      findings: [{ code: 'RESOLVER_DHCP_SERVERS', severity: 'info', subject: 'site-b', summary: 'Nodes on 10.20.0.0/24 are handed DHCP option 6: 10.20.0.53', evidence: { subnet: '10.20.0.0/24', serving: { writtenAt: 1796039906, dhcpdSince: 1796039000 } } }],
    };
    const json = JSON.stringify(renderEvidence(served).messages);
    expect(json).toContain('written at <!date^1796039906^{date_short_pretty} {time_secs}|2026-11-30 11:58:26 UTC>');
    expect(json).toContain('dhcpd since <!date^1796039000^');
    expect(json).not.toMatch(/1796039906(?!\^)|1796039000(?!\^)/);
  });

  it('reads a nested value as labelled pairs, an empty field as (none) or (empty), never blank or as raw keys', () => {
    const subnet: Report = {
      kind: 'resolver-check', target: 'site-b', status: 'warning', verdict: 'Nodes are handed a resolver MAAS does not run', ...at,
      findings: [{ code: 'RESOLVER_DHCP_SERVERS', severity: 'warning', subject: 'site-b', summary: 'Nodes on 10.20.0.0/24 are handed DHCP option 6: 10.20.0.53', evidence: { maasSubnet: { id: 20, dns_servers: [], allow_dns: true, description: '' } } }],
    };
    const text = renderEvidence(subnet).messages.flatMap((m) => blocksText(m.blocks)).join('\n');
    expect(text).toContain('• maas subnet: id 20; dns servers (none); allow dns yes; description (empty)');
    expect(text).not.toMatch(/dns_servers|allow_dns|servers: ;|servers ;/);
  });

  it('holds every finding whole, its evidence as labelled lines and each fix once, times as date tokens', () => {
    const thread = renderEvidence(wiped);
    expect(thread.files).toEqual([]);
    const text = thread.messages.flatMap((m) => blocksText(m.blocks)).join('\n');
    for (const f of wiped.findings) expect(text).toContain(f.summary.replace('2026-11-30 11:58 UTC', '2026-11-30 11:58:00 UTC'));
    expect(text).toContain('• machines: prod-cp-0 (powered yes)');
    expect(text.split(fixDns.replace(/`/g, '')).length + text.split(fixDns).length - 2).toBe(1);
    expect(JSON.stringify(thread.messages)).toContain('<!date^1796039906^{date_short_pretty} {time_secs}|2026-11-30 11:58:26 UTC>');
    for (const m of thread.messages) expect(checkMessage(m)).toBeUndefined();
  });

  it('says a fix shared by nine drifted machines once, under the first, counting the others', () => {
    const nine: Report = { ...many, verdict: '9 machines have drifted MACs', findings: Array.from({ length: 9 }, (_, i) => drift(i)) };
    const thread = renderEvidence(nine);
    const lines = thread.messages.flatMap((m) => blocksText(m.blocks));
    expect(lines.filter((l) => l.startsWith('*Fix:*'))).toEqual(['*Fix:* /maas fix-macs site-c _(also for the 8 findings below)_']);
    const longForm = blocksText(renderReport(nine).blocks);
    expect(longForm.filter((l) => l.startsWith('*Fix:*'))).toEqual(['*Fix:* /maas fix-macs site-c _(also for the 8 findings below)_']);
    const file = renderEvidence(many).files.find((f) => f.filename === 'site-c-evidence.txt')!;
    expect(file.content.match(/^Fix: /gm)).toEqual(['Fix: ']);
    expect(file.content).toContain('Fix: /maas fix-macs site-c (also for the 299 findings below)');
  });

  it('puts the whole evidence of 300 findings in a file with ISO 8601 times, and a sample in the thread', () => {
    const thread = renderEvidence(many);
    expect(thread.messages).toHaveLength(1);
    expect(blocksText(thread.messages[0]!.blocks).filter((l) => l.includes('`MAC_DRIFT` *critical*'))).toHaveLength(3);
    const file = thread.files.find((f) => f.filename === 'site-c-evidence.txt')!;
    expect(file.content.match(/^\[critical\] MAC_DRIFT — vm-\d+$/gm)).toHaveLength(300);
    expect(file.content).toContain('started 2026-11-30T12:00:00.000Z');
  });
});

describe('time formats', () => {
  const text = 'last 2026-12-01 19:58 UTC; seen 2026-12-01T19:58:26.500Z; pxe Sat, 28 Nov. 2026 20:00:26';
  it('Slack gets date tokens for all three forms a check writes, a file ISO 8601', () => {
    expect(withDateTokens(text).match(/<!date\^\d+\^/g)).toHaveLength(3);
    expect(withIsoTimes(text)).toBe('last 2026-12-01T19:58:00Z; seen 2026-12-01T19:58:26Z; pxe 2026-11-28T20:00:26Z');
  });
});
