import { describe, expect, it } from 'vitest';
import { finishReport, reportsJson } from '../../src/core/report.ts';

const report = finishReport(
  {
    kind: 'resolver-check',
    target: 'site-b',
    verdict: 'Nodes on 10.20.0.0/24 are handed DHCP option 6: 10.20.0.53',
    findings: [
      {
        code: 'RESOLVER_DHCP_SERVERS',
        severity: 'warning',
        subject: 'site-b',
        summary: 'the running dhcpd started before the file was last written',
        evidence: { ttlLeft: 298, expiresAt: 1796039906000, serving: { loaded: false, writtenAt: 1796039906, dhcpdSince: 1796039000 } },
      },
    ],
  },
  new Date('2026-11-30T12:00:00Z'),
  new Date('2026-11-30T12:00:00.042Z'),
);

describe('reportsJson (what --json prints)', () => {
  it('a Unix-seconds time keeps its number and gains an ISO 8601 twin beside it', () => {
    const [finding] = (JSON.parse(reportsJson(report)) as typeof report).findings;
    expect(finding!.evidence.serving).toEqual({ loaded: false, writtenAt: 1796039906, writtenAtIso: '2026-11-30T11:58:26Z', dhcpdSince: 1796039000, dhcpdSinceIso: '2026-11-30T11:43:20Z' });
  });

  it('numbers that are not Unix seconds get no twin: a TTL, a time already in milliseconds; the rest of the report is unchanged', () => {
    const parsed = JSON.parse(reportsJson([report])) as (typeof report)[];
    expect(parsed[0]!.findings[0]!.evidence).toMatchObject({ ttlLeft: 298, expiresAt: 1796039906000 });
    expect(Object.keys(parsed[0]!.findings[0]!.evidence).sort()).toEqual(['expiresAt', 'serving', 'ttlLeft']);
    expect({ ...parsed[0], findings: [] }).toEqual({ ...report, findings: [] });
  });
});
