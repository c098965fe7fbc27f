import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { macSummary, type MacRow } from '../../src/features/macs/summary.ts';
import { checkMessage, startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Finding, type Report } from '../../src/core/report.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { blocksText } from '../../lab/transcript.ts';
import { capturedLog } from './slack-harness.ts';

let emulator: SlackEmulator;
beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
});
afterEach(async () => {
  await emulator.close();
});

function notifier() {
  return createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: createRedactor(['canary-secret-42']), log: capturedLog().log, retryConfig: { retries: 0 }, threadIntervalMs: 0 });
}

const mac = (n: number, salt: number) => `52:54:00:${salt.toString(16).padStart(2, '0')}:${((n >> 8) & 255).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`;

function resolverReport(site: string, failing: boolean): Report {
  const findings: Finding[] = failing
    ? [{ code: 'RESOLVER_SERVFAIL', severity: 'critical', subject: site, summary: `the rack of ${site} answers SERVFAIL`, evidence: { resolver: '10.0.0.2', zone: 'maas' } }]
    : [{ code: 'RESOLVER_OK', severity: 'info', subject: site, summary: 'answers', evidence: { serial: 7 } }];
  return finishReport({ kind: 'resolver-check', target: site, verdict: failing ? `The resolver of ${site} answers SERVFAIL for maas SOA` : `The resolver of ${site} answers maas`, findings }, new Date());
}

/** A mac-diff of `n` drifted machines, as the check reports it: drift findings and the summary with its table and snippet. */
function macDiff(site: string, n: number): Report {
  const rows: MacRow[] = Array.from({ length: n }, (_, i) => ({ hostname: `vm-${i}`, status: 'Deployed', vmHost: 'kvm-1', domain: `vm-${i}`, state: 'drift', interface: 'eth0', recorded: mac(i, 1), live: mac(i, 2), detail: '' }));
  const live = new Map(rows.map((r, i) => [r.domain, [mac(i, 2)]]));
  const drift: Finding[] = rows.map((r) => ({ code: 'MAC_DRIFT', severity: 'critical', subject: r.hostname, summary: 'MAAS records another MAC', evidence: { hostname: r.hostname, interface: 'eth0', recorded: r.recorded, live: r.live } }));
  return finishReport({ kind: 'mac-diff', target: site, verdict: `${n} of ${n} machines at ${site} have drifted MACs`, findings: [...drift, macSummary({ site, rows, liveByDomain: live, anyDrift: true })] }, new Date());
}

describe('all at incident scale', () => {
  it('100 sites, 60 failing: one summary message, every failing site in the thread, worst first, every target named', async () => {
    const reports = Array.from({ length: 100 }, (_, i) => resolverReport(`site-${String(i).padStart(3, '0')}`, i % 5 !== 0 && i % 7 !== 0 ? true : i % 3 === 0));
    const failing = reports.filter((r) => r.status !== 'ok').map((r) => r.target);
    await notifier().postReports({ channel: 'C0OPS', user: 'U0OPS1' }, reports);

    const top = emulator.messages.filter((m) => !m.threadTs);
    expect(top).toHaveLength(1);
    const summary = top[0]!;
    expect(checkMessage(summary)).toBeUndefined();
    expect(summary.text).toBe(`CRITICAL: ${failing.length} of 100 targets need attention (resolver-check all)`);
    const thread = emulator.messages.filter((m) => m.threadTs === summary.ts && !m.files);
    expect(thread.map((m) => (m.text.match(/site-\d+/) ?? [''])[0])).toEqual(failing);
    // Every target can be found from the summary: in its table or its file, and the healthy ones by name.
    const shown = blocksText(summary.blocks ?? []).join('\n');
    const file = emulator.files.find((f) => f.threadTs === summary.ts);
    for (const r of reports) expect(`${shown}\n${file?.content ?? ''}`).toContain(r.target);
  });

  it('a healthy all is one short message and no thread', async () => {
    await notifier().postReports({ channel: 'C0OPS' }, [resolverReport('site-a', false), resolverReport('site-b', false)]);
    expect(emulator.messages).toHaveLength(1);
    expect(blocksText(emulator.messages[0]!.blocks ?? []).filter((l) => l.trim())).toHaveLength(4);
  });
});

describe('long lists as files', () => {
  it('a 300-machine mac-diff: the message counts the findings, the thread shows the table head and holds the whole table, snippet and evidence', async () => {
    const report = macDiff('site-c', 300);
    await notifier().postReports({ channel: 'C0OPS' }, [report]);

    const [message] = emulator.messages.filter((m) => !m.threadTs);
    expect(message).toBeDefined();
    expect(checkMessage(message!)).toBeUndefined();
    const text = blocksText(message!.blocks ?? []).join('\n');
    expect(text).toMatch(/…and \d+ more: `MAC_DRIFT` ×\d+/);
    expect(text).not.toContain('interface_macs = {');
    const thread = blocksText(emulator.messages.filter((m) => m.threadTs === message!.ts).flatMap((m) => m.blocks ?? [])).join('\n');
    expect(thread).toContain('table: the whole of it (300 rows) is in the file `site-c-table.txt` in this thread');
    expect(thread).toMatch(/```\nHOSTNAME\s+STATE/);

    const files = emulator.files;
    expect(files.map((f) => [f.filename, f.channel, f.threadTs])).toEqual([
      ['site-c-table.txt', 'C0OPS', message!.ts],
      ['site-c-snippet.tf', 'C0OPS', message!.ts],
      ['site-c-evidence.txt', 'C0OPS', message!.ts],
    ]);
    const table = files[0]!.content!.trimEnd().split('\n');
    expect(table).toHaveLength(301);
    expect(table[0]).toMatch(/^HOSTNAME\s+STATUS/);
    expect(table.at(-1)).toContain('vm-299');
    const snippet = (report.findings.at(-1)!.evidence as { snippet: string }).snippet;
    expect(files[1]!.content).toBe(`${snippet}\n`);
    expect(emulator.calls.map((c) => c.method).filter((m) => m.startsWith('files.'))).toEqual([
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
      'files.getUploadURLExternal',
      'files.completeUploadExternal',
    ]);
  });

  it('an all run whose files Slack shares late (S-FILE-ASYNC): every reply of the thread shows before its files, none among them', async () => {
    await emulator.close();
    emulator = await startSlackEmulator({ channels: ['C0OPS'], fileShareDelayMs: 600 });
    const paced = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: createRedactor([]), log: capturedLog().log, retryConfig: { retries: 0 }, threadIntervalMs: 100 });
    const sites = ['site-a', 'site-b', 'site-c', 'site-d'];
    await paced.postReports({ channel: 'C0OPS' }, sites.map((site) => macDiff(site, 300)));
    const [summary] = emulator.messages.filter((m) => !m.threadTs);
    const expectedFiles = emulator.files.filter((f) => f.threadTs === summary!.ts).length;
    expect(expectedFiles).toBeGreaterThanOrEqual(sites.length);
    await emulator.waitFor((e) => e.messages.filter((m) => m.threadTs === summary!.ts && m.files?.length).length === expectedFiles, { timeoutMs: 10_000, description: 'every file shared' });

    const thread = emulator.messages.filter((m) => m.threadTs === summary!.ts).sort((a, b) => a.seq - b.seq);
    const kinds = thread.map((m) => (m.files?.length ? 'file' : 'reply'));
    expect(kinds.indexOf('file')).toBe(kinds.lastIndexOf('reply') + 1);
    expect(kinds.filter((k) => k === 'reply').length).toBeGreaterThanOrEqual(sites.length);
  });

  it('the emulator completes only what was uploaded, with the length announced', async () => {
    const { WebClient } = await import('@slack/web-api');
    const client = new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, retryConfig: { retries: 0 } });
    const announced = await client.files.getUploadURLExternal({ filename: 'x.txt', length: 10 });
    expect(new URL(announced.upload_url!).hostname).toBe('127.0.0.1');
    await expect(client.files.completeUploadExternal({ files: [{ id: announced.file_id! }], channel_id: 'C0OPS' })).rejects.toMatchObject({ data: { error: 'file_not_found' } });
    await fetch(announced.upload_url!, { method: 'POST', body: 'short' });
    await expect(client.files.completeUploadExternal({ files: [{ id: announced.file_id! }], channel_id: 'C0OPS' })).rejects.toMatchObject({ data: { error: 'file_upload_size_mismatch' } });
  });
});

describe('text from outside stays text', () => {
  it('hostile names from MAAS, virsh or dig never become a live mention, broadcast or link: summary, thread, file comments', async () => {
    const hostile = ['<!channel>', '<@U0ADMIN>', '<#C0SECRET>', '<https://evil.example|click me>', '<!subteam^S0OPS>'];
    const reports = hostile.map((h, i) => {
      const r = resolverReport(`site-${i}`, true);
      return { ...r, verdict: `${h} answers SERVFAIL`, findings: r.findings.map((f) => ({ ...f, subject: h, summary: `rack ${h}`, evidence: { resolver: h, zone: `${h}.maas` } })) };
    });
    const table = macDiff('site-x', 40);
    const named = { ...table, findings: table.findings.map((f) => (f.code === 'MAC_SUMMARY' ? { ...f, evidence: { ...f.evidence, tableText: `${String(f.evidence.tableText)}\n<!here> row` } } : f)) };
    await notifier().postReports({ channel: 'C0OPS' }, [...reports, named]);

    expect(emulator.messages.length).toBeGreaterThan(hostile.length);
    for (const m of emulator.messages) {
      const all = `${m.text}\n${JSON.stringify(m.blocks ?? [])}`.replace(/<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|[\d-]+ [\d:]+ UTC>/g, '');
      expect(all).not.toMatch(/<[!@#]|<https?:/);
    }
    expect(JSON.stringify(emulator.messages.map((m) => m.blocks))).toContain('&lt;!channel&gt;');
  });
});
