import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { jobRegistry } from '../../jobs/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { capturedLog } from '../e2e/slack-harness.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/*
 * Hostile HTTP requests at the real bot role's listener on loopback (issue 27's near misses):
 * a signed click that names no user, and a body far over the limit. Each is answered at once
 * with a status a client can read; nothing is queued and nothing reaches a listener.
 */

const MAAS_KEY = 'HostileReqConsumer01:HostileReqTokenKey1:HostileReqTokenSecret00000001';
const CONFIG = `
slack:
  commandChannels: [C0OPS]
  operators: [U0OPS1]
  approvers: [U0LEAD1]
maas:
  region-a: { url: "http://127.0.0.1:9/MAAS", apiKey: env:MAAS_KEY }
sites:
  site-b: { maas: region-a, machines: { zone: site-b } }
`;

let emulator: SlackEmulator;
let http: Runtime;
let socket: Runtime;
let appUrl: string;
let redis: Redis;
const httpLog = capturedLog();
const socketLog = capturedLog();
const prefix = freshPrefix('hostile-req');

function startBot(env: NodeJS.ProcessEnv, log: ReturnType<typeof capturedLog>, botPrefix: string): Promise<Runtime> {
  return startRuntime({
    role: 'bot',
    loaded: parseConfigText(CONFIG, { path: 'hostile-req.yaml', env: { MAAS_KEY } }),
    env: { SLACK_BOT_TOKEN: emulator.botToken, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: TEST_REDIS_URL, ...env },
    prefix: botPrefix,
    host: '127.0.0.1',
    log: log.log,
  });
}

beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
  http = await startBot({ SLACK_SIGNING_SECRET: emulator.signingSecret }, httpLog, prefix);
  socket = await startBot({ SLACK_APP_TOKEN: emulator.appToken }, socketLog, `${prefix}-socket`);
  appUrl = `http://127.0.0.1:${http.port}`;
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await http?.close();
  await socket?.close();
  await emulator?.close();
  await deletePrefix(redis, prefix);
  await deletePrefix(redis, `${prefix}-socket`);
  redis.disconnect();
});

async function queuedJobs(runtime: Runtime): Promise<number> {
  let total = 0;
  for (const name of jobRegistry.keys()) {
    const counts = await runtime.queues.queue(name).getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    total += Object.values(counts).reduce((a, b) => a + b, 0);
  }
  return total;
}

async function refusedCount(runtime: Runtime, reason: string): Promise<number> {
  const metric = await runtime.metrics.slackRequestsRefused.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** Web API calls and response_url posts the bot made: what running a listener would leave. */
function botCalls(): number {
  return emulator.calls.filter((c) => c.method !== 'apps.connections.open' && c.method !== 'auth.test').length;
}

const NO_USER: [string, Record<string, unknown>][] = [
  ['no user at all', { user: undefined }],
  ['a user without an id', { user: { name: 'eve', team_id: 'T0EMULATED' } }],
  ['a user that is a string', { user: 'U0LEAD1' }],
];

describe('a signed click that names no user (Bolt reads body.user.id unchecked)', () => {
  it.each(NO_USER)('over HTTP, %s: acknowledged at once with 200, logged and counted, nothing run', async (_name, payloadOverrides) => {
    const [counted, calls, queued] = [await refusedCount(http, 'unreadable_payload'), botCalls(), await queuedJobs(http)];
    const sent = await emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, value: '0123456789abcdef', messageTs: '1.000001', payloadOverrides });
    // Before: 500 (buildSource threw), or for a string user the approval listener ran with no user.
    expect(sent.status).toBe(200);
    expect(sent.body).toBe('');
    expect(await refusedCount(http, 'unreadable_payload')).toBe(counted + 1);
    expect(httpLog.lines.filter((l) => l.msg === 'acknowledged and dropped a Slack payload Bolt cannot read; nothing was run').length).toBe(counted + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(botCalls()).toBe(calls);
    expect(await queuedJobs(http)).toBe(queued);
  });

  it.each(NO_USER)('over Socket Mode, %s: acked (before: never acked, so Slack retries), counted, nothing run', async (_name, payloadOverrides) => {
    const [counted, calls] = [await refusedCount(socket, 'unreadable_payload'), botCalls()];
    const sent = await emulator.clickButton({ viaSocket: true, actionId: APPROVE_ACTION, value: '0123456789abcdef', messageTs: '1.000001', payloadOverrides });
    expect(sent.acked).toBe(true);
    expect(await refusedCount(socket, 'unreadable_payload')).toBe(counted + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(botCalls()).toBe(calls);
    expect(await queuedJobs(socket)).toBe(0);
  });

  it('a click with its user still runs the listener (the guard lets it through)', async () => {
    const sent = await emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, value: 'deadbeefdeadbeef', user: 'U0LEAD1', messageTs: '1.000001' });
    expect(sent.status).toBe(200);
    const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: 'the answer to the click' });
    expect(answer.text).toMatch(/This plan is not known any more/);
  });
});

/** Streams `bytes` to /slack/events with a real HTTP client and reads the status and body it gets. */
function postLarge(bytes: number): Promise<{ status: number; body: string; connection: string | undefined }> {
  const { port } = new URL(appUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/slack/events', method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(bytes) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('a body over the 4 MiB limit', () => {
  it('a 5 MB body is answered 413 with a short body, then the connection is closed (before: reset, no status)', async () => {
    const counted = await refusedCount(http, 'too_large');
    const answer = await postLarge(5 * 1024 * 1024);
    expect(answer).toEqual({ status: 413, body: 'request body larger than 4194304 bytes\n', connection: 'close' });
    expect(await refusedCount(http, 'too_large')).toBe(counted + 1);
    // The listener is still there for the next request.
    const ok = await emulator.sendSlashCommand({ appUrl, text: 'help' });
    expect(ok.status).toBe(200);
  });
});
