import { blocksText } from '../../../lab/transcript.ts';
import { describe, expect, it } from 'vitest';
import { checkBlocks } from '../../../lab/slack-emulator/index.ts';
import type { Finding, Report } from '../../../src/core/report.ts';
import { renderReport, renderReports, SLACK_LIMITS, type Block, type RenderedMessage } from '../../../src/edge/slack/render.ts';

const at = { startedAt: '2026-11-30T12:00:00.000Z', durationMs: 42 };

const healthy: Report = { kind: 'dns-check', target: 'staging', status: 'ok', verdict: 'staging-k8s.maas.example resolves to its 3 control-plane addresses', findings: [], ...at };

const emptyRecord: Report = {
  kind: 'dns-check',
  target: 'prod',
  status: 'critical',
  verdict: 'prod-k8s.maas.example resolves to nothing',
  findings: [
    {
      code: 'DNS_RECORD_EMPTY',
      severity: 'critical',
      subject: 'prod-k8s.maas.example',
      summary: 'The DNS resource holds no A/AAAA record: the API server name resolves to nothing',
      evidence: { fqdn: 'prod-k8s.maas.example', recorded: [], desired: ['10.11.135.36', '10.11.135.37', '10.11.135.38'] },
      fix: '/maas fix-dns prod',
    },
    {
      code: 'DNS_EMPTY_HASH_CACHED',
      severity: 'warning',
      subject: 'MaasCluster default/prod',
      summary: 'The last-applied-dns-hash is SHA-256 of the empty set: an empty set was applied and cached',
      evidence: { annotation: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    },
  ],
  ...at,
};

const hostile: Report = {
  kind: 'mac-diff',
  target: 'site-b',
  status: 'warning',
  verdict: 'vm <!channel> & <https://evil.example|click> drifted',
  findings: [
    {
      code: 'MAC_DRIFT',
      severity: 'warning',
      subject: '<!here> `vm`',
      summary: 'hostname <@U0EVIL> *bold* & co',
      evidence: { hostname: '<!channel>', domain: 'a`b', recorded: ['<x>'], nested: { a: '<!everyone>' } },
      fix: 'nothing <!subteam^S123>',
    },
  ],
  ...at,
};

function macFinding(i: number): Finding {
  const info = i % 5 === 0;
  return {
    code: info ? 'MAC_NOT_VIRSH' : i % 7 === 0 ? 'MAC_IN_USE' : 'MAC_DRIFT',
    severity: info ? 'info' : 'critical',
    subject: `vm-${String(i).padStart(3, '0')}.site-b.maas`,
    summary: `MAAS records a MAC for eth0 that is not on the live VM vm-${i}`,
    evidence: {
      systemId: `s${String(i).padStart(5, '0')}`,
      vmHost: '172.16.1.28',
      domain: `vm-${i}`,
      interface: 'eth0',
      recorded: ['52:54:00:12:34:56'],
      live: ['52:54:00:65:43:21'],
      history: Array.from({ length: 40 }, (_, k) => `event ${k}: ${'word '.repeat(20)}`),
    },
    fix: '/maas fix-macs site-b',
  };
}

const bigMacDiff: Report = {
  kind: 'mac-diff',
  target: 'site-b',
  status: 'critical',
  verdict: '240 of 300 VMs have drifted MACs',
  findings: Array.from({ length: 300 }, (_, i) => macFinding(i)),
  ...at,
};

const fixWithResults: Report = {
  kind: 'fix-macs',
  target: 'site-b',
  status: 'error',
  verdict: '2 of 3 interfaces repaired; 1 failed',
  findings: [],
  plan: {
    id: 'plan-7f3a',
    steps: [1, 2, 3].map((n) => ({ subject: `vm-${n}`, action: 'update-interface-mac', detail: `eth0 52:54:00:00:00:0${n} → 52:54:00:00:01:0${n}` })),
  },
  results: [
    { subject: 'vm-1', action: 'update-interface-mac', outcome: 'verified', detail: 'read back 52:54:00:00:01:01' },
    { subject: 'vm-2', action: 'update-interface-mac', outcome: 'verified', detail: 'read back 52:54:00:00:01:02' },
    { subject: 'vm-3', action: 'update-interface-mac', outcome: 'failed', detail: 'MAAS answered 409: machine is Deployed' },
  ],
  ...at,
};

const hugePlan: Report = {
  kind: 'fix-macs',
  target: 'site-b',
  status: 'critical',
  verdict: '400 interfaces to repair',
  findings: [],
  plan: {
    id: 'plan-big',
    steps: Array.from({ length: 400 }, (_, n) => ({ subject: `vm-${n}`, action: 'update-interface-mac', detail: `eth0 ${'52:54:00:00:00:00 '.repeat(3)}` })),
  },
  ...at,
};

function texts(blocks: readonly Block[]): string[] {
  return blocks.flatMap((b) => (b.type === 'context' ? b.elements.map((e) => e.text) : b.type === 'divider' ? [] : [b.text.text]));
}

/** Slack's limits, checked the way the emulator (and Slack) would refuse the message. */
function expectWithinLimits(message: RenderedMessage): void {
  expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  for (const b of message.blocks) {
    if (b.type === 'section') expect(b.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    if (b.type === 'header') expect(b.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
  }
  expect(texts(message.blocks).join('').length).toBeLessThanOrEqual(SLACK_LIMITS.totalText);
  expect(checkBlocks(message.blocks)).toBeUndefined();
  expect(message.text.length).toBeLessThanOrEqual(3000);
}

describe('renderReport golden files', () => {
  it.each([
    ['healthy', healthy],
    ['dns-empty-record', emptyRecord],
    ['hostile-names', hostile],
    ['mac-diff-300-findings', bigMacDiff],
    ['fix-with-results', fixWithResults],
    ['fix-huge-plan', hugePlan],
  ])('%s', async (name, report) => {
    const message = renderReport(report);
    expectWithinLimits(message);
    await expect(JSON.stringify(message, null, 2) + '\n').toMatchFileSnapshot(`./golden/${name}.json`);
  });

  it('several targets', async () => {
    const message = renderReports([emptyRecord, healthy, { ...bigMacDiff, kind: 'dns-check', target: 'edge' }]);
    expectWithinLimits(message);
    await expect(JSON.stringify(message, null, 2) + '\n').toMatchFileSnapshot('./golden/all-targets.json');
  });
});

describe('renderReport', () => {
  it('starts the fallback text with the status word and the verdict', () => {
    expect(renderReport(emptyRecord).text).toBe('CRITICAL: prod-k8s.maas.example resolves to nothing');
    expect(renderReport(healthy).text).toBe('OK: staging-k8s.maas.example resolves to its 3 control-plane addresses');
    expect(renderReports([emptyRecord, healthy]).text).toMatch(/^CRITICAL: 1 of 2 targets need attention · prod CRITICAL: prod-k8s/);
  });

  it("shows every finding's code in backticks, with severity, summary, evidence and fix", () => {
    const all = texts(renderReport(emptyRecord).blocks).join('\n');
    expect(all).toContain('`DNS_RECORD_EMPTY` *critical*');
    expect(all).toContain('`DNS_EMPTY_HASH_CACHED` *warning*');
    expect(all).toContain('desired `10.11.135.36, 10.11.135.37, 10.11.135.38`');
    expect(all).toContain('*Fix:* /maas fix-dns prod');
  });

  it('escapes names from MAAS and Slack so they cannot ping, link or break a code span', () => {
    const message = renderReport(hostile);
    // Our own date tokens (<!date^…>) are the only angle brackets left live.
    const all = [message.text, ...texts(message.blocks)].join('\n').replace(/<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|[\d-]+ [\d:]+ UTC>/g, '');
    expect(all).not.toMatch(/<!|<@|<https?:|<x>/);
    expect(all).toContain('&lt;!channel&gt;');
    expect(all).toContain("`a'b`");
  });

  it('shows the worst findings first, at most three of a code, and counts the rest by code', () => {
    const message = renderReport(bigMacDiff);
    const all = texts(message.blocks);
    const findingTexts = all.filter((t) => t.includes('`MAC_'));
    const shown = findingTexts.filter((t) => !t.startsWith('…and'));
    const codes = shown.map((t) => /`(MAC_[A-Z_]+)`/.exec(t)?.[1]);
    for (const code of new Set(codes)) expect(codes.filter((c) => c === code).length).toBeLessThanOrEqual(3);
    expect(shown.length).toBeGreaterThanOrEqual(3);
    const severities = shown.map((t) => (t.includes('*critical*') ? 2 : t.includes('*warning*') ? 1 : 0));
    expect(severities).toEqual([...severities].sort((a, b) => b - a));
    const overflow = all.find((t) => t.startsWith('…and'));
    const hidden = bigMacDiff.findings.length - shown.length;
    expect(overflow).toMatch(new RegExp(`^…and ${hidden} more findings: \`MAC_DRIFT\` ×\\d+, \`MAC_NOT_VIRSH\` ×\\d+, \`MAC_IN_USE\` ×\\d+ on vm-[^ ]+, .* … \\+\\d+ more$`));
  });

  it('summarises long evidence instead of cutting it mid-word', () => {
    const section = texts(renderReport(bigMacDiff).blocks).find((t) => t.includes('`MAC_DRIFT`'))!;
    expect(section).toMatch(/history `event 0: word word[^`]*, … \+\d+ more`/);
    expect(section).not.toMatch(/\bwor…|\bwo…/);
  });

  it('keeps room for blocks the caller appends', () => {
    expect(renderReport(bigMacDiff, { reserveBlocks: 2 }).blocks.length).toBeLessThanOrEqual(48);
  });

  it('summarises a plan longer than three sections', () => {
    const all = texts(renderReport(hugePlan).blocks);
    expect(all[2]).toMatch(/^\*Plan\* `plan-big`: 400 steps/);
    expect(all.some((t) => /…and \d+ more$/.test(t))).toBe(true);
  });

  it('packs many targets into one line each and stays within limits', () => {
    const reports = Array.from({ length: 120 }, (_, i) => ({ ...emptyRecord, target: `cluster-${i}` }));
    const message = renderReports(reports);
    expectWithinLimits(message);
    const all = texts(message.blocks).join('\n');
    expect(all).toContain('*cluster-0* (dns-check) CRITICAL');
    expect(all).toMatch(/…and \d+ more targets/);
  });
});

describe('multi-line evidence', () => {
  const table = ['HOSTNAME      STATE  RECORDED → LIVE', ...Array.from({ length: 400 }, (_v, i) => `site-b-node${i}  Ready  eth0 52:54:00:b0:00:01 → 52:54:00:81:40:17`)].join('\n');
  const summary: Report = {
    kind: 'mac-diff',
    target: 'site-b',
    status: 'ok',
    verdict: 'table test',
    findings: [{ code: 'MAC_SUMMARY', severity: 'info', subject: 'site-b', summary: 'rows', evidence: { tableText: table, snippet: 'interface_macs = {\n  "a" = ["52:54:00:00:00:01"]\n}', okMachines: 3 } }],
    ...at,
  };

  it('keeps the layout of a table in a code block, shows its head and names the file in the thread that holds all of it', () => {
    const message = renderReport(summary);
    expectWithinLimits(message);
    const text = texts(message.blocks).join('\n');
    expect(text).toContain('```\nHOSTNAME      STATE  RECORDED → LIVE\nsite-b-node0  Ready');
    expect(text).toContain('site-b-node9  Ready');
    expect(text).not.toContain('site-b-node10  Ready');
    expect(text).toContain('```\n… the whole of it (400 rows) is in the file `site-b-table.txt` in the thread');
    expect(text).toContain('machines OK `3`');
  });

  it('shows every snippet when there is room, as it was written', () => {
    const message = renderReport({ ...summary, findings: [{ ...summary.findings[0]!, evidence: { snippet: 'interface_macs = {\n  "a" = ["52:54:00:00:00:01"]\n}' } }] });
    expect(texts(message.blocks).join('\n')).toContain('```\ninterface_macs = {\n  "a" = ["52:54:00:00:00:01"]\n}\n```');
  });
});

describe('a healthy answer', () => {
  it('is two lines: the verdict, and when it was measured', () => {
    const healthy: Report = { kind: 'resolver-check', target: 'site-a', status: 'ok', verdict: 'The resolver of site-a answers maas, SOA serial 7', findings: [{ code: 'RESOLVER_OK', severity: 'info', subject: 'site-a', summary: 'answers', evidence: { serial: 7 } }], startedAt: '2026-11-30T03:00:00.000Z', durationMs: 40 };
    const lines = blocksText(renderReport(healthy).blocks);
    expect(lines).toEqual([':white_check_mark: *OK* · resolver-check site-a: The resolver of site-a answers maas, SOA serial 7', 'no findings · 1 note · started 2026-11-30 03:00:00 UTC · took 40 ms']);
  });
});

describe('many failing targets in one message', () => {
  it.each([24, 25, 29, 40, 60])('%i targets with findings stay within 50 blocks (counted findings included)', (n) => {
    const reports: Report[] = Array.from({ length: n }, (_, i) => ({ ...emptyRecord, target: `prod-${i}` }));
    const message = renderReports(reports);
    expect(message.blocks.length).toBeLessThanOrEqual(50);
    expect(checkBlocks(message.blocks)).toBeUndefined();
    const shown = [blocksText(message.blocks)].flat().join("\n");
    for (const r of reports) expect(shown).toContain(r.target);
  });
});
