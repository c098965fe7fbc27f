import { afterEach, describe, expect, it } from 'vitest';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport } from '../../src/core/report.ts';
import { startAlerting } from '../../src/edge/alerts/start-alerting.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { freePort } from '../../lab/private-redis.ts';
import { capturedLog } from '../e2e/slack-harness.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

/*
 * A scheduled scan finds drift while Slack cannot be reached (nothing listens at SLACK_API_URL):
 * its log says the alert was not posted, so an operator reading the logs is not told Slack has it.
 * Real parts: Redis, a BullMQ job scheduler, the scan worker, the Slack gateway's HTTP client.
 */

const config = parseConfigText(
  `
slack: { alertChannel: C0ALERTS }
maas:
  region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:K }
sites:
  site-b: { maas: region-a, rack: { resolver: 127.0.0.1, probe: direct }, vmHosts: { default: { user: ops } } }
schedules: { macs: 300ms }
`,
  { path: 't.yaml', env: { K: 'aaaa:bbbb:cccc' } },
).config;

let runs = 0;
const driftingMacDiff: JobDefinition = {
  name: 'mac-diff',
  run: async (_ctx, data) => {
    runs++;
    const findings = [{ code: 'MAC_DRIFT', severity: 'critical' as const, subject: 'node-1', summary: 'node-1 drifted', evidence: {} }];
    return [finishReport({ kind: 'mac-diff', target: data.target, verdict: '1 machine has drifted MACs', findings }, new Date())];
  },
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a scheduled scan while Slack is unreachable', () => {
  it('logs the alert as reconciled with posted: false, and warns that the next scan tries again', async () => {
    const prefix = freshPrefix('scan-noslack');
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    const { log, lines } = capturedLog();
    const redact = createRedactor([]);
    const sender = createSlackGateway({ token: 'xoxb-unchecked', slackApiUrl: `http://127.0.0.1:${await freePort()}/api/`, redact, log, intervalMs: 5, retryConfig: { retries: 0 } });
    const alerting = await startAlerting({ connection: redis, prefix, config, adapters: {} as Adapters, sender, log, redact, findJob: (n) => (n === 'mac-diff' ? driftingMacDiff : undefined) });
    cleanups.push(async () => {
      await alerting.close();
      await sender.close(2000);
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });

    const reconciled = () => lines.filter((l) => l.msg === 'alert reconciled' && l.kind === 'drift');
    await waitUntil(() => reconciled().length >= 2, 15_000);
    expect(runs).toBeGreaterThanOrEqual(2);
    for (const line of reconciled()) expect(line).toMatchObject({ check: 'mac-diff', target: 'site-b', posted: false, updated: false, muted: false });
    const warnings = lines.filter((l) => l.msg === 'could not bring the alert message up to date; the next scan tries again');
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(String(warnings[0]?.err)).toMatch(/Slack could not be reached/);
  });
});
