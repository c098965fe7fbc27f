import { readFileSync } from 'node:fs';
import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { boundedLabel, createMetrics, peerOutcomeOfError, peerOutcomeOfStatus, slackErrorKind } from '../../src/engine/metrics.ts';
import { COMMAND_NAMES, JOB_KINDS } from '../../src/features/registry.ts';

/** What the composition root hands the metrics: the registry's command names and job kinds. */
const REGISTRY_LABELS = { commandNames: COMMAND_NAMES, jobKinds: JOB_KINDS };

async function valueOf(metrics: ReturnType<typeof createMetrics>, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want));
  return hit?.value;
}

describe('createMetrics', () => {
  it('uses its own registry, so two instances (and the global one) do not share counts', async () => {
    const a = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    const b = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    a.recordCommand('dns-check', 'accepted');
    a.recordCommand('dns-check', 'accepted');
    expect(await valueOf(a, 'maas_chatops_commands_total', { subcommand: 'dns-check', outcome: 'accepted' })).toBe(2);
    expect(await valueOf(b, 'maas_chatops_commands_total', { subcommand: 'dns-check', outcome: 'accepted' })).toBeUndefined();
    expect(globalRegistry.getSingleMetric('maas_chatops_commands_total')).toBeUndefined();
  });

  it('keeps label values in bounded sets: an unknown subcommand or kind is "other"', async () => {
    const m = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    m.recordCommand('fxi-dns', 'usage');
    m.recordCommand('U0SECRETUSER', 'denied');
    m.observeJob('prod-cluster-7', 'ok', 1);
    m.setOpenAlerts('dns-check', 3);
    m.setOpenAlerts('some-target', 1);
    expect(await valueOf(m, 'maas_chatops_commands_total', { subcommand: 'other', outcome: 'usage' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_commands_total', { subcommand: 'other', outcome: 'denied' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_jobs_total', { kind: 'other', outcome: 'ok' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_open_alerts', { kind: 'dns-check' })).toBe(3);
    const text = await m.text();
    expect(text).not.toContain('U0SECRETUSER');
    expect(text).not.toContain('prod-cluster-7');
    expect(text).not.toContain('some-target');
  });

  it('takes the known names from options', async () => {
    const m = createMetrics({ defaultMetrics: false, commandNames: ['approve'], jobKinds: ['scan-dns'] });
    m.recordCommand('approve', 'answered');
    m.recordCommand('dns-check', 'accepted');
    m.observeJob('scan-dns', 'critical', 2);
    expect(await valueOf(m, 'maas_chatops_commands_total', { subcommand: 'approve' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_commands_total', { subcommand: 'other' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_jobs_total', { kind: 'scan-dns', outcome: 'critical' })).toBe(1);
  });

  it('counts jobs and observes their duration in one histogram series per kind and outcome', async () => {
    const m = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    m.observeJob('mac-diff', 'critical', 0.3);
    m.observeJob('mac-diff', 'critical', 45);
    m.observeJob('mac-diff', 'failed', 2);
    expect(await valueOf(m, 'maas_chatops_jobs_total', { kind: 'mac-diff', outcome: 'critical' })).toBe(2);
    const text = await m.text();
    expect(text).toContain('maas_chatops_job_duration_seconds_count{kind="mac-diff",outcome="critical"} 2');
    expect(text).toContain('maas_chatops_job_duration_seconds_bucket{le="0.5",kind="mac-diff",outcome="critical"} 1');
    expect(text).toContain('maas_chatops_job_duration_seconds_sum{kind="mac-diff",outcome="failed"} 2');
  });

  it('reads queue depths from the supplier at scrape time', async () => {
    let calls = 0;
    const m = createMetrics({
      defaultMetrics: false,
      queueDepths: async () => {
        calls += 1;
        return { 'maas-dns-check': 4, 'maas-mac-diff': 0 };
      },
    });
    expect(calls).toBe(0);
    const text = await m.text();
    expect(calls).toBe(1);
    expect(text).toContain('maas_chatops_queue_depth{queue="maas-dns-check"} 4');
    expect(text).toContain('maas_chatops_queue_depth{queue="maas-mac-diff"} 0');
  });

  it('leaves queue depths out and counts an error when the supplier fails or hangs', async () => {
    const m = createMetrics({ defaultMetrics: false, queueDepthTimeoutMs: 50 });
    m.setQueueDepthSupplier(async () => ({ 'maas-dns-check': 7 }));
    expect(await m.text()).toContain('maas_chatops_queue_depth{queue="maas-dns-check"} 7');

    m.setQueueDepthSupplier(() => Promise.reject(new Error('ECONNREFUSED')));
    let text = await m.text();
    expect(text).not.toContain('maas_chatops_queue_depth{');
    expect(text).toContain('maas_chatops_queue_depth_errors_total 1');

    m.setQueueDepthSupplier(() => {
      throw new Error('thrown before any promise');
    });
    expect(await m.text()).toContain('maas_chatops_queue_depth_errors_total 2');

    m.setQueueDepthSupplier(() => new Promise(() => undefined));
    text = await m.text();
    expect(text).not.toContain('maas_chatops_queue_depth{');
    expect(text).toContain('maas_chatops_queue_depth_errors_total 3');
  });

  it('times peer requests and classifies failures', async () => {
    const m = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    await expect(m.timePeer('kube', async () => 'pods')).resolves.toBe('pods');
    const timeout = Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' });
    await expect(m.timePeer('ssh', () => Promise.reject(timeout))).rejects.toBe(timeout);
    await expect(m.timePeer('kube', () => Promise.reject(Object.assign(new Error('forbidden'), { statusCode: 403 })))).rejects.toThrow('forbidden');
    m.observeMaasRequest({ method: 'GET', path: 'machines/', status: 200, ms: 12 });
    m.observeMaasRequest({ method: 'PUT', path: 'nodes/x/interfaces/1/', status: 409, ms: 8 });
    m.observeMaasRequest({ method: 'GET', path: 'machines/', status: 503, ms: 8 });
    m.observeMaasRequest({ method: 'GET', path: 'machines/', status: 0, ms: 10_000 });
    const requests = (labels: Record<string, string>) => valueOf(m, 'maas_chatops_peer_requests_total', labels);
    expect(await requests({ peer: 'kube', outcome: 'ok' })).toBe(1);
    expect(await requests({ peer: 'kube', outcome: 'client_error' })).toBe(1);
    expect(await requests({ peer: 'ssh', outcome: 'timeout' })).toBe(1);
    expect(await requests({ peer: 'maas', outcome: 'ok' })).toBe(1);
    expect(await requests({ peer: 'maas', outcome: 'client_error' })).toBe(1);
    expect(await requests({ peer: 'maas', outcome: 'server_error' })).toBe(1);
    expect(await requests({ peer: 'maas', outcome: 'error' })).toBe(1);
    expect(await m.text()).toContain('maas_chatops_peer_request_duration_seconds_sum{peer="maas",outcome="error"} 10');
  });

  it('counts repairs, their steps, Slack errors and 429s', async () => {
    const m = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    m.recordRepair('fix-macs', 'applied');
    m.recordRepairStep('fix-macs', 'verified');
    m.recordRepairStep('fix-macs', 'verified');
    m.recordRepairStep('fix-dns', 'refused');
    m.recordSlackError('chat.postMessage', Object.assign(new Error('not_in_channel'), { code: 'slack_webapi_platform_error' }));
    m.recordSlackError('chat.update', new Error('socket hang up'));
    m.recordSlackError('https://hooks.slack.com/x/y', new Error('?'));
    m.recordSlackRateLimited('chat.postMessage');
    m.recordSlackRateLimited('https://slack.com/api/chat.postMessage');
    expect(await valueOf(m, 'maas_chatops_repairs_total', { kind: 'fix-macs', outcome: 'applied' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_repair_steps_total', { kind: 'fix-macs', outcome: 'verified' })).toBe(2);
    expect(await valueOf(m, 'maas_chatops_repair_steps_total', { kind: 'fix-dns', outcome: 'refused' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_slack_api_errors_total', { method: 'chat.postMessage', kind: 'platform' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_slack_api_errors_total', { method: 'chat.update', kind: 'other' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_slack_api_errors_total', { method: 'other', kind: 'other' })).toBe(1);
    expect(await valueOf(m, 'maas_chatops_slack_rate_limited_total', { method: 'chat.postMessage' })).toBe(2);
  });

  it('caps the Slack method label at 30 distinct values', async () => {
    const m = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS });
    for (let i = 0; i < 40; i++) m.recordSlackRateLimited(`chat.method${String.fromCharCode(97 + (i % 26))}${i >= 26 ? 'x' : ''}`);
    const { values } = await m.slackRateLimited.get();
    expect(values).toHaveLength(31);
    expect(values.find((v) => v.labels.method === 'other')?.value).toBe(10);
  });

  it('adds process metrics with the same prefix unless told not to', async () => {
    expect(await createMetrics().text()).toContain('maas_chatops_process_resident_memory_bytes');
    expect(await createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS }).text()).not.toContain('process_');
  });

  it('serves the Prometheus text format content type', () => {
    expect(createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS }).contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('documents every metric it registers in docs/operations.md', () => {
    const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const names = createMetrics({ defaultMetrics: false, ...REGISTRY_LABELS })
      .registry.getMetricsAsArray()
      .map((m) => m.name);
    expect(names.length).toBeGreaterThanOrEqual(12);
    for (const name of names) expect(docs, name).toContain(`\`${name}\``);
  });
});

describe('label helpers', () => {
  it.each([
    [200, 'ok'],
    [204, 'ok'],
    [401, 'client_error'],
    [409, 'client_error'],
    [500, 'server_error'],
    [0, 'error'],
  ] as const)('HTTP %i is %s', (status, outcome) => {
    expect(peerOutcomeOfStatus(status)).toBe(outcome);
  });

  it('classifies thrown errors', () => {
    expect(peerOutcomeOfError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(peerOutcomeOfError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('error');
    expect(peerOutcomeOfError(Object.assign(new Error('x'), { status: 502 }))).toBe('server_error');
    expect(peerOutcomeOfError(null)).toBe('error');
  });

  it('maps @slack/web-api error codes', () => {
    expect(slackErrorKind({ code: 'slack_webapi_rate_limited_error' })).toBe('rate_limited');
    expect(slackErrorKind({ code: 'slack_webapi_http_error' })).toBe('http');
    expect(slackErrorKind({ code: 'slack_webapi_request_error' })).toBe('request');
    expect(slackErrorKind(undefined)).toBe('other');
  });

  it('boundedLabel admits only the listed values', () => {
    expect(boundedLabel(['a', 'b'], 'a')).toBe('a');
    expect(boundedLabel(['a', 'b'], 'c')).toBe('other');
  });
});
