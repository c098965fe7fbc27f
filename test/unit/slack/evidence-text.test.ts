import { describe, expect, it } from 'vitest';
import { blocksText } from '../../../lab/transcript.ts';
import type { Finding, Report } from '../../../src/core/report.ts';
import { subjectText } from '../../../src/edge/slack/evidence-text.ts';
import { renderEvidence } from '../../../src/edge/slack/evidence-thread.ts';

/*
 * The evidence in a check's thread reads as words (issue 31): each test renders a finding as the
 * notifier does and reads the thread's lines as Slack shows them.
 */

const IMAGE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v0.6.1-spectro-4.9.1';

function threadLines(...findings: Finding[]): string[] {
  const report: Report = { kind: 'dns-check', target: 'prod', status: 'critical', verdict: 'API record WIPED', findings, startedAt: '2026-11-30T12:00:00.000Z', durationMs: 42 };
  const { messages, files } = renderEvidence(report);
  expect(files).toEqual([]);
  return messages.flatMap((m) => (m.blocks?.length ? blocksText(m.blocks) : m.text.split('\n')));
}

const finding = (code: string, subject: string, evidence: Record<string, unknown>): Finding => ({ code, severity: 'critical', subject, summary: `${code} for ${subject}`, evidence });

describe('evidence lines a reader sees in the thread', () => {
  it('a control-plane machine is a sentence (name, system id, state, power, running, IP); two machines are told apart by a semicolon', () => {
    const lines = threadLines(
      finding('DNS_RECORD_EMPTY', 'prod-k8s.maas.example', {
        machines: [
          { name: 'prod-cp-0', systemId: 'k7dx3p', state: 'Deployed', powered: true, running: true, deleting: false, ip: '10.0.0.5' },
          { name: 'prod-cp-1', systemId: 'm3qa8r', state: 'Deployed', powered: false, running: false, deleting: true, ip: null },
        ],
      }),
    );
    expect(lines).toContain('• machines: prod-cp-0 (k7dx3p) is Deployed, powered on, running, at 10.0.0.5; prod-cp-1 (m3qa8r) is Deployed, powered off, not running, being deleted, with no IP');
    expect(lines.join('\n')).not.toMatch(/system id k7dx3p|powered yes|\{/);
  });

  it("a failed probe's reason, which its sentence already quotes whole, is said once; a short value is still labelled", () => {
    const reason = "MAAS region-bad answered 401 to GET users/?op=whoami: MAAS does not know the API key's token";
    const lines = threadLines({ code: 'PROBE_FAILED', severity: 'error', subject: 'site-bad', summary: `Could not check site-bad: ${reason}`, evidence: { reason, status: '401' } });
    expect(lines.filter((l) => l.includes('answered 401 to GET users'))).toHaveLength(1);
    expect(lines).toContain('• status: 401');
  });

  it("option 6 and who gets it read as one line, whether the check names one group or a list", () => {
    const lines = threadLines(finding('RESOLVER_DHCP_RACK_FIRST', 'site-b', { option6: ['127.0.1.2', '10.0.0.5'], who: ['nodes'] }));
    expect(lines).toContain('• DHCP option 6 (DNS servers) handed to nodes: 127.0.1.2, 10.0.0.5');
    expect(lines.join('\n')).not.toMatch(/• who:/);
  });

  it('a list of plain values stays comma-separated', () => {
    expect(threadLines(finding('DNS_DRIFT', 'prod-k8s.maas.example', { desired: ['10.0.0.5', '10.0.0.6'] }))).toContain('• desired: 10.0.0.5, 10.0.0.6');
  });

  it('the TTL left has its unit, and the client view is said in words, not its code', () => {
    const lines = threadLines(finding('DNS_CLIENT_VIEW', 'prod-k8s.maas.example', { ttlLeft: 297, state: 'still-serving' }));
    expect(lines).toContain('• TTL left: 297 s');
    expect(lines).toContain('• client view: still serving the old answer from cache');
    expect(lines.join('\n')).not.toContain('still-serving');
  });

  it("dig's reply header reads as its fields, without dig's ;; ->>HEADER<<- markers", () => {
    const lines = threadLines(finding('RESOLVER_SERVFAIL', 'site-b', { statusLine: ';; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 13688' }));
    expect(lines).toContain("• dig's reply header: opcode QUERY, status SERVFAIL, id 13688");
    expect(lines.join('\n')).not.toContain('HEADER');
  });

  it("a long image subject is shortened in the finding's heading; its evidence line keeps the whole reference", () => {
    const lines = threadLines({ ...finding('DNS_CONTROLLER_VULNERABLE', IMAGE, { image: IMAGE, version: 'v4.9.1' }), severity: 'warning' });
    expect(lines).toContain(':warning: `DNS_CONTROLLER_VULNERABLE` *warning* — image v0.6.1-spectro-4.9.1 (gcr.io/…/cluster-api-provider-maas-controller)');
    expect(lines).toContain(`• image: ${IMAGE}`);
  });
});

describe('subjectText', () => {
  it('leaves short image references and subjects that are not images as they are', () => {
    expect(subjectText('quay.io/capm:v4.9.2')).toBe('quay.io/capm:v4.9.2');
    expect(subjectText('prod-k8s.maas.example')).toBe('prod-k8s.maas.example');
    const sentence = 'the subnet 10.20.0.0/24 of site-b hands nodes the rack first: option 6';
    expect(subjectText(sentence)).toBe(sentence);
  });
});
