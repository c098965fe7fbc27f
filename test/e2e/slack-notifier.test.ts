import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkBlocks, startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createRedactor } from '../../src/core/redact.ts';
import type { Finding, Report } from '../../src/core/report.ts';
import { createSlackNotifier, SlackDeliveryError } from '../../src/edge/slack/notifier.ts';
import { capturedLog } from './slack-harness.ts';

let emulator: SlackEmulator;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS', 'C0ALERTS'] });
});

afterEach(async () => {
  await emulator.close();
});

const fastRetry = { retries: 2, minTimeout: 10, maxTimeout: 50, factor: 1 };

function notifier(log = capturedLog().log, redact = (s: string) => s) {
  return createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact, log, retryConfig: fastRetry });
}

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
      summary: 'The DNS resource holds no A record',
      evidence: { fqdn: 'prod-k8s.maas.example', recorded: [], desired: ['10.11.135.36'] },
      fix: '/maas fix-dns prod',
    },
  ],
  startedAt: '2026-11-30T12:00:00.000Z',
  durationMs: 42,
};

function manyFindings(n: number): Report {
  const findings: Finding[] = Array.from({ length: n }, (_, i) => ({
    code: i % 4 === 0 ? 'MAC_NOT_VIRSH' : 'MAC_DRIFT',
    severity: i % 4 === 0 ? 'info' : 'critical',
    subject: `vm-${i}.maas`,
    summary: `MAAS records 52:54:00:00:00:${(i % 256).toString(16).padStart(2, '0')} but the VM has another MAC`,
    evidence: { systemId: `sys${i}`, recorded: ['52:54:00:00:00:01'], live: ['52:54:00:00:00:02'], note: 'long '.repeat(400) },
    fix: '/maas fix-macs site-b',
  }));
  return { ...emptyRecord, kind: 'mac-diff', target: 'site-b', verdict: `${n} VMs checked, MACs drifted`, findings };
}

describe('Slack notifier against the emulated Web API', () => {
  it('posts a report with verdict-first fallback text and the finding codes in blocks, its evidence after it, in a thread when asked', async () => {
    await notifier().postReports({ channel: 'C0OPS', threadTs: '1700000000.000100' }, [emptyRecord]);
    expect(emulator.messages).toHaveLength(2);
    const [message, evidence] = emulator.messages;
    expect(message).toMatchObject({ channel: 'C0OPS', threadTs: '1700000000.000100', ephemeral: false, via: 'chat.postMessage' });
    expect(message!.text).toBe('CRITICAL: prod-k8s.maas.example resolves to nothing');
    expect(JSON.stringify(message!.blocks)).toContain('`DNS_RECORD_EMPTY`');
    expect(evidence).toMatchObject({ channel: 'C0OPS', threadTs: '1700000000.000100' });
    expect(JSON.stringify(evidence!.blocks)).toContain('`DNS_RECORD_EMPTY` *critical* — prod-k8s.maas.example');
  });

  it('posts a 300-finding report that Slack accepts', async () => {
    await notifier().postReports({ channel: 'C0OPS' }, [manyFindings(300)]);
    const post = emulator.calls.find((c) => c.method === 'chat.postMessage');
    expect(post?.response).toMatchObject({ ok: true });
    const blocks = emulator.messages[0]!.blocks!;
    expect(blocks.length).toBeLessThanOrEqual(50);
    expect(checkBlocks(blocks)).toBeUndefined();
    expect(JSON.stringify(blocks)).toMatch(/…and \d+ more: `MAC_DRIFT` ×\d+/);
    // The whole of it is one click away: a thread reply Slack accepts, and the file it names.
    const thread = emulator.messages.filter((m) => m.threadTs === emulator.messages[0]!.ts);
    for (const m of thread) if (m.blocks) expect(checkBlocks(m.blocks)).toBeUndefined();
    expect(thread.flatMap((m) => m.files ?? []).map((f) => f.filename)).toContain('site-b-evidence.txt');
  });

  it('waits as Retry-After asks on 429, then posts once', async () => {
    emulator.rateLimitNext(1, 1, 'chat.postMessage');
    const { log, lines } = capturedLog();
    await notifier(log).postReports({ channel: 'C0OPS' }, [emptyRecord]);
    const posts = emulator.calls.filter((c) => c.method === 'chat.postMessage');
    // The answer once, after the wait; then its evidence in its thread.
    expect(posts.map((c) => c.status)).toEqual([429, 200, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(emulator.messages.filter((m) => !m.threadTs)).toHaveLength(1);
    expect(lines.some((l) => l.retryAfterSec === 1)).toBe(true);
  });

  it('evidence shows the fields a person uses: no absent value, no internal MAAS handle', async () => {
    const drift: Report = {
      ...emptyRecord,
      kind: 'mac-diff',
      target: 'site-b',
      verdict: '1 of 1 machines at site-b have drifted MACs',
      findings: [
        {
          code: 'MAC_DRIFT',
          severity: 'critical',
          subject: 'site-b-node1',
          summary: 'MAAS records another MAC',
          evidence: { hostname: 'site-b-node1', interface: 'eth0', interfaceId: 6, recorded: '52:54:00:b0:00:01', live: '52:54:00:81:40:17', liveInterface: '-', seenByRack: 'site-b-rack', lastPxeEvent: null, discoveryId: 'MTAuMjAuMC4xNTcsNTI6NTQ6MDA6ODE6NDA6MTc=' },
        },
      ],
    };
    await notifier().postReports({ channel: 'C0OPS' }, [drift]);
    const shown = JSON.stringify(emulator.messages[1]!.blocks);
    expect(emulator.messages[1]!.threadTs).toBe(emulator.messages[0]!.ts);
    expect(shown).toContain('• seen by rack: site-b-rack');
    expect(shown).toContain('• MAC: 52:54:00:b0:00:01 → 52:54:00:81:40:17');
    for (const useless of ['live interface', 'discovery id', 'MTAuMjAu', 'interface id', 'last pxe event']) expect(shown).not.toContain(useless);
  });

  it("logs Slack's error code and throws a clean, non-retryable error for an unknown channel", async () => {
    const { log, lines } = capturedLog();
    const error = await notifier(log)
      .postReports({ channel: 'C0GONE' }, [emptyRecord])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackDeliveryError);
    expect(error).toMatchObject({ slackError: 'channel_not_found', retryable: false, message: 'Slack refused the message for C0GONE (channel_not_found)' });
    expect(lines.find((l) => l.slackError === 'channel_not_found')).toMatchObject({ channel: 'C0GONE', msg: 'could not post to Slack' });
    expect(emulator.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
  });

  it("falls back to the command's response_url where the bot may not post", async () => {
    const responseUrl = emulator.responseUrlFor('C0PRIVATE', 'U0OPS1');
    await notifier().postReports({ channel: 'C0PRIVATE', user: 'U0OPS1', responseUrl }, [emptyRecord]);
    // No thread to put the evidence in: the long form follows the short answer.
    const answers = emulator.answersTo(responseUrl);
    expect(answers).toEqual([
      expect.objectContaining({ channel: 'C0PRIVATE', ephemeral: false, text: 'CRITICAL: prod-k8s.maas.example resolves to nothing' }),
      expect.objectContaining({ channel: 'C0PRIVATE', ephemeral: false, text: 'CRITICAL: prod-k8s.maas.example resolves to nothing' }),
    ]);
    expect(JSON.stringify(answers[0]!.blocks)).not.toContain('_evidence:_');
    expect(JSON.stringify(answers[1]!.blocks)).toContain('_evidence:_');
  });

  it('redacts secrets in everything it posts', async () => {
    const leaky: Report = {
      ...emptyRecord,
      verdict: 'token xoxb-1234567890-abcdefghij leaked',
      findings: [{ ...emptyRecord.findings[0]!, evidence: { reason: 'apiKey=ckey0123456789abcd:tkey0123456789abcd:tsecret0123456789ab' } }],
    };
    await notifier(undefined, createRedactor([])).postReports({ channel: 'C0OPS' }, [leaky]);
    const posted = JSON.stringify(emulator.calls.find((c) => c.method === 'chat.postMessage')!.params);
    expect(posted).not.toMatch(/xoxb-1234567890|tsecret0123456789ab/);
    expect(posted).toContain('[redacted]');
  });

  it('posts an error as escaped text', async () => {
    await notifier().postError({ channel: 'C0ALERTS' }, 'dns-check prod failed: <!channel> & MAAS said 503');
    expect(emulator.messages[0]!.text).toBe(':x: dns-check prod failed: &lt;!channel&gt; &amp; MAAS said 503');
  });
});
