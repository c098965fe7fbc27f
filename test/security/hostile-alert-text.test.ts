import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Finding } from '../../src/core/report.ts';
import { AlertStore } from '../../src/edge/alerts/alert-store.ts';
import { createAlertmanagerJob, type AlertmanagerJobData } from '../../src/edge/alerts/alertmanager-job.ts';
import { AlertReconciler } from '../../src/edge/alerts/reconcile.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import type { JobContext, JobDefinition } from '../../src/engine/job-types.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/*
 * Issue 27 item 9 for alerts: a MAAS hostname, a check's verdict or an Alertmanager label that
 * carries a line break cannot start a line of its own in the open alert, its thread, the resolved
 * alert or the Alertmanager answer (`node-7⏎*Resolved* all healthy`), and a broadcast or mention
 * in it stays text. Real parts: Redis (alert records, locks), the alert reconciler, the
 * Alertmanager job, the Slack gateway and the Slack Web API emulator on loopback.
 */

const ALERTS = 'C0ALERTS';
const FORGED = '*Resolved* all healthy';
const HOST = `node-7\n${FORGED} <!channel> <@U0PWNED1>`;
const LABEL = `KubeAPIDown\r\n${FORGED} <!channel>`;
const GROUP = `{}:{alertname="x"}\u2028${FORGED}`;

const { config } = parseConfigText(
  `
slack: { alertChannel: ${ALERTS} }
maas: { region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:MAAS_KEY } }
sites:
  site-b: { maas: region-a, vmHosts: { default: { user: ops } } }
`,
  { path: 'h.yaml', env: { MAAS_KEY: 'consumerkey1:tokenkey1:tokensecret1' } },
);
const log = silentLogger();
const ctx: JobContext = { config, adapters: {} as Adapters, log };

const drift = (host: string): Finding => ({ code: 'MAC_DRIFT', severity: 'critical', subject: host, summary: `${host}: MAAS records aa, the VM has bb`, evidence: { hostname: host } });

/** mac-diff as the site looks now: the hostile machine names its verdict, as a one-machine drift does. */
function macDiff(site: { findings: Finding[] }): JobDefinition {
  return {
    name: 'mac-diff',
    run: async (_ctx, data) => {
      const verdict = site.findings.length ? `${site.findings.length} machines have drifted MACs: ${site.findings.map((f) => f.subject).join(', ')}` : 'every MAC matches';
      return [finishReport({ kind: 'mac-diff', target: data.target, verdict, findings: [...site.findings] }, new Date())];
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function world() {
  const slack = await startSlackEmulator({ channels: [ALERTS] });
  const redis = createRedis(TEST_REDIS_URL, 'worker');
  const prefix = freshPrefix('hostile-alert');
  const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact: createRedactor([]), log, intervalMs: 0, retryConfig: { retries: 0 } });
  cleanups.push(async () => {
    await sender.close(2000);
    await slack.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  const store = new AlertStore(redis, prefix);
  const clock = { now: Date.now() };
  const reconciler = new AlertReconciler({ store, sender, channel: ALERTS, log, now: () => clock.now });
  const site = { findings: [] as Finding[] };
  const check = macDiff(site);
  const scan = async (findings: Finding[]) => {
    site.findings = findings;
    clock.now += 60_000;
    await reconciler.reconcile('mac-diff', 'site-b', await check.run(ctx, { target: 'site-b' }), { requested: true });
  };
  const alertmanager = createAlertmanagerJob({ store, sender, channel: ALERTS, redact: createRedactor([]), findJob: (name) => (name === 'mac-diff' ? check : undefined) });
  return { slack, scan, alertmanager };
}

/**
 * Every chat.postMessage and chat.update the alert code sent: what Slack got on the wire and the
 * lines a reader sees. The evidence replies ("Evidence for …") are rendered by
 * src/edge/slack/evidence-thread.ts, whose outside text test/security/hostile-text.test.ts holds.
 */
function sent(slack: SlackEmulator): { wire: string; lines: string[] }[] {
  return slack.calls
    .filter((c) => (c.method === 'chat.postMessage' || c.method === 'chat.update') && !String(c.params.text ?? '').startsWith('Evidence for '))
    .map((c) => {
      const text = String(c.params.text ?? '');
      const blocks = typeof c.params.blocks === 'string' ? (JSON.parse(c.params.blocks) as unknown[]) : ((c.params.blocks as unknown[] | undefined) ?? []);
      return { wire: `${text}\n${JSON.stringify(blocks)}`, lines: [...text.split('\n'), ...blocksText(blocks)] };
    });
}

/** Lines that begin with the forged text: a reader would take them for the bot's own. */
const forgedLines = (lines: readonly string[]) => lines.filter((l) => l.trimStart().startsWith(FORGED) || l.trimStart().startsWith('*Resolved\\* all'));
/** Broadcasts and mentions Slack would act on; the bot's own date tokens (<!date^…>) aside. */
const live = (wire: string) => wire.match(/<!(?!date\^)[^>]*>|<@[A-Z0-9]+>/g) ?? [];

describe('outside text in alerts stays on its line and inert', () => {
  it('a hostname with a line break and <!channel>: the open alert, its thread note, the resolved alert and its Was: list', async () => {
    const { slack, scan } = await world();
    await scan([drift('node-1')]);
    await scan([drift('node-1'), drift(HOST)]);
    await scan([]);

    const messages = sent(slack);
    const [opened, changed, resolved] = [messages.find((m) => m.wire.includes('CRITICAL')), messages.find((m) => m.wire.includes('1 new')), messages.find((m) => m.wire.includes('RESOLVED'))];
    expect(opened && changed && resolved, 'an open alert, a change note and the resolved alert were sent').toBeTruthy();
    // The reader still sees the name, with its line break shown as ⏎.
    expect(resolved!.lines.join('\n')).toContain('node-7⏎*Resolved* all healthy <!channel>');
    expect(changed!.lines.join('\n')).toContain('node-7⏎*Resolved* all healthy');
    for (const m of messages) {
      expect(forgedLines(m.lines)).toEqual([]);
      expect(live(m.wire)).toEqual([]);
    }
  });

  it('an Alertmanager label and group key with line breaks: the answer in the alert thread and the resolved line', async () => {
    const { slack, scan, alertmanager } = await world();
    await scan([drift(HOST)]);
    const data: AlertmanagerJobData = { target: 'site-b', requestedBy: 'alertmanager', groupKey: GROUP, status: 'firing', check: 'mac-diff', alerts: [{ alertname: LABEL, fingerprint: 'f1', status: 'firing' }] };
    await alertmanager.run(ctx, data);
    await alertmanager.run(ctx, { ...data, status: 'resolved', alerts: [{ ...data.alerts[0]!, status: 'resolved' }] });

    const messages = sent(slack);
    const answer = messages.find((m) => m.wire.includes('Alertmanager KubeAPIDown'));
    const resolvedLine = messages.find((m) => m.wire.includes('Alertmanager resolved'));
    expect(answer && resolvedLine, 'the answer and the resolved line were sent').toBeTruthy();
    expect(answer!.lines.join('\n')).toContain('KubeAPIDown⏎*Resolved* all healthy <!channel>');
    for (const m of messages) {
      expect(forgedLines(m.lines)).toEqual([]);
      expect(live(m.wire)).toEqual([]);
    }
  });
});
