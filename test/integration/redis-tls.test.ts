import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { freePort } from '../../lab/private-redis.ts';
import { dieWithParent } from '../../lab/die-with-parent.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Notifier, ReplyTarget } from '../../src/engine/notifier.ts';
import { botAclLine } from '../../src/engine/queue/redis-acl.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis, pingRedis } from '../../src/engine/queue/redis-connection.ts';
import { redisSettingsFrom } from '../../src/engine/queue/redis-settings.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Report } from '../../src/core/report.ts';
import { freshPrefix, waitUntil } from '../helpers/redis.ts';

/** A CA made for this test, a server certificate it signed for 127.0.0.1, and a second CA that signed nothing here. */
function makeCertificates(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path('ca.key'), '-out', path('ca.pem'), '-days', '1', '-subj', '/CN=maas-chatops test CA');
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path('other.key'), '-out', path('other.pem'), '-days', '1', '-subj', '/CN=someone else');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', path('server.key'), '-out', path('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(path('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', path('server.csr'), '-CA', path('ca.pem'), '-CAkey', path('ca.key'), '-CAcreateserial', '-out', path('server.pem'), '-days', '1', '-extfile', path('san.ext'));
  return { ca: path('ca.pem'), otherCa: path('other.pem'), cert: path('server.pem'), key: path('server.key') };
}

class RecordingNotifier implements Notifier {
  reports: { target: ReplyTarget; reports: Report[] }[] = [];
  async postReports(target: ReplyTarget, reports: Report[]) {
    this.reports.push({ target, reports });
  }
  async postError() {}
}

describe('Redis over TLS (rediss:// and REDIS_TLS_CA), as an ACL user', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  async function startTlsRedis(prefix: string) {
    const dir = mkdtempSync(join(tmpdir(), 'mct-tls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const certs = makeCertificates(dir);
    const port = await freePort();
    writeFileSync(join(dir, 'users.acl'), `${botAclLine('maas-chatops', 'bot-pw-7d1e', prefix)}\nuser default on nopass ~* &* +@all\n`);
    const child: ChildProcess = spawn(
      'redis-server',
      ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--tls-cert-file', certs.cert, '--tls-key-file', certs.key, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no', '--aclfile', join(dir, 'users.acl')],
      { stdio: 'ignore' },
    );
    dieWithParent(child);
    cleanups.push(async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    });
    return { port, certs };
  }

  it('queues and runs a job over TLS, verified against the CA file, logged in as the ACL user', async () => {
    const prefix = freshPrefix('tls');
    const { port, certs } = await startTlsRedis(prefix);
    const { settings } = redisSettingsFrom({ REDIS_URL: `rediss://maas-chatops:bot-pw-7d1e@127.0.0.1:${port}`, REDIS_TLS_CA: certs.ca });
    const worker: Redis = createRedis(settings, 'worker');
    const producer: Redis = createRedis(settings, 'producer');
    worker.on('error', () => undefined);
    producer.on('error', () => undefined);
    cleanups.push(() => {
      worker.disconnect();
      producer.disconnect();
    });
    await waitUntil(() => pingRedis(producer), 10_000, 100);
    expect(await producer.call('ACL', 'WHOAMI').catch((err: Error) => err.message)).toMatch(/NOPERM/);
    const redact = createRedactor(['bot-pw-7d1e']);
    const queues = new JobQueues(producer, redact, prefix);
    const notifier = new RecordingNotifier();
    let runs = 0;
    const echo: JobDefinition = {
      name: 'echo',
      run: async (_ctx, data) => {
        runs++;
        return [finishReport({ kind: 'dns-check', target: data.target, verdict: 'healthy', findings: [] }, new Date())];
      },
    };
    const running: RunningWorkers = startJobWorkers({
      connection: worker,
      jobs: new Map([[echo.name, echo]]),
      context: { config: parseConfigText('{}', { path: 't.yaml', env: {} }).config, adapters: {} as Adapters, log: silentLogger() },
      notifier,
      redact,
      prefix,
    });
    cleanups.push(async () => {
      await running.close();
      await queues.close();
    });
    await queues.enqueue('echo', { target: 'prod', reply: { channel: 'C1', user: 'U1' } });
    await waitUntil(() => notifier.reports.length === 1, 15_000);
    expect(runs).toBe(1);
    expect(notifier.reports[0]?.reports[0]).toMatchObject({ target: 'prod', status: 'ok' });
  });

  it('refuses a server whose certificate another CA signed: the bot stays not ready', async () => {
    const prefix = freshPrefix('tls-bad-ca');
    const { port, certs } = await startTlsRedis(prefix);
    const { settings } = redisSettingsFrom({ REDIS_URL: `rediss://maas-chatops:bot-pw-7d1e@127.0.0.1:${port}`, REDIS_TLS_CA: certs.otherCa });
    const producer: Redis = createRedis(settings, 'producer');
    const errors: string[] = [];
    producer.on('error', (err) => errors.push(err.message));
    cleanups.push(() => producer.disconnect());
    await waitUntil(() => errors.some((m) => /certificate/i.test(m)), 10_000);
    expect(errors.find((m) => /certificate/i.test(m))).toMatch(/self[- ]signed certificate|unable to verify/i);
    expect(await pingRedis(producer, 500)).toBe(false);
  });
});
