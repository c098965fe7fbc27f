/**
 * The load generator, run as its own process (fork with --import tsx): sends signed slash
 * commands as Slack does, `concurrency` in flight until `commands` are all sent, and reports
 * each one's ack latency (request written → response read). Only to loopback.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { EMULATED, slackSignature } from '../../lab/slack-emulator/index.ts';

export interface LoadCommand {
  text: string;
  user: string;
  channel: string;
  responseUrl: string;
}

export interface LoadRequest {
  type: 'run';
  /** `http://127.0.0.1:<port>/slack/events` */
  url: string;
  signingSecret: string;
  concurrency: number;
  commands: LoadCommand[];
}

export interface Sample {
  index: number;
  status: number;
  ackMs: number;
  /** Date.now() when the request was sent and when its ack was read. */
  sentAt: number;
  ackedAt: number;
}

export type LoadReply = { type: 'done'; samples: Sample[]; wallMs: number } | { type: 'error'; message: string };

function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!/^127\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`the load generator sends to loopback only, not ${host}`);
}

function body(c: LoadCommand): string {
  return new URLSearchParams({
    token: 'emulated-verification-token',
    team_id: EMULATED.teamId,
    team_domain: EMULATED.teamDomain,
    channel_id: c.channel,
    channel_name: c.channel.toLowerCase(),
    user_id: c.user,
    user_name: c.user.toLowerCase(),
    command: '/maas',
    text: c.text,
    api_app_id: EMULATED.appId,
    is_enterprise_install: 'false',
    response_url: c.responseUrl,
    trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
  }).toString();
}

function send(agent: Agent, url: URL, signingSecret: string, c: LoadCommand, index: number): Promise<Sample> {
  const raw = body(c);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    'content-length': Buffer.byteLength(raw),
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(signingSecret, timestamp, raw),
  };
  return new Promise((resolve) => {
    const sentAt = Date.now();
    const t0 = performance.now();
    const done = (status: number) => resolve({ index, status, ackMs: performance.now() - t0, sentAt, ackedAt: Date.now() });
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', () => done(0));
    });
    req.on('error', () => done(0));
    req.end(raw);
  });
}

export async function runLoad(r: LoadRequest): Promise<{ samples: Sample[]; wallMs: number }> {
  assertLoopback(r.url);
  const url = new URL(r.url);
  const agent = new Agent({ keepAlive: true, maxSockets: r.concurrency });
  const samples: Sample[] = new Array(r.commands.length);
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < r.commands.length) {
      const i = next++;
      samples[i] = await send(agent, url, r.signingSecret, r.commands[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(r.concurrency, r.commands.length) }, lane));
  const wallMs = performance.now() - t0;
  agent.destroy();
  return { samples, wallMs };
}

if (process.send) {
  process.on('message', (m: LoadRequest | { type: 'exit' }) => {
    if (m.type === 'exit') {
      process.disconnect?.();
      return;
    }
    runLoad(m).then(
      (result) => process.send!({ type: 'done', ...result } satisfies LoadReply),
      (err: unknown) => process.send!({ type: 'error', message: String(err) } satisfies LoadReply),
    );
  });
  process.send({ type: 'ready' });
}
