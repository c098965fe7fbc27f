import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { parse as parseYaml, stringify } from 'yaml';
import { runAuditCli } from '../../src/engine/audit/audit-cli.ts';
import { main as cli } from '../../src/cli.ts';
import { loadConfig } from '../../src/core/config.ts';
import { kubeconfigFor } from '../../lab/kube-sim/index.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { closeLabServe } from '../helpers/close-lab-serve.ts';

/*
 * A distinct canary in every secret slot (MAAS key, SSH private key, kubeconfig token, Slack bot
 * token, app token, signing secret, a wrong MAAS token that MAAS echoes back in its 401), then every
 * check, both fix plans and the error paths run through Slack, the worker and Redis; then the CLI.
 * No canary may appear in any Slack emulator record, log line, CLI output, or Redis key or value.
 */

const hex = (n: number) => randomBytes(n).toString('hex');
const CANARY = {
  botToken: `xoxb-canarybot-${hex(12)}`,
  appToken: `xapp-canaryapp-${hex(12)}`,
  signingSecret: `canarysigning${hex(16)}`,
  badTokenKey: `CanaryBadTok${hex(5)}`,
  badTokenSecret: `CanaryBadSecret${hex(12)}`,
  badKubeToken: `canarykube${hex(16)}`,
  // Power parameters a MAAS 500 echoes: short, punctuated, spaced; none is in the config, so only structure and shape can catch them.
  echoedPowerPass: `P@;${hex(3)},w`,
  echoedKg: `kg${hex(6)}`,
  echoedPassword: `a b ${hex(3)} d`,
  echoedTextPass: `Tx,${hex(3)};z`,
};

let world: LabWorld;
let emulator: SlackEmulator;
let runtime: Runtime;
let appUrl: string;
let env: Record<string, string>;
let configPath: string;
const prefix = freshPrefix('canary');
const logChunks: string[] = [];
const cliOut: string[] = [];
/** Every canary and every fragment the redactor must have caught. */
const canaries: string[] = [];

function keyBodyLines(pem: string): string[] {
  return pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));
}

beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts], botToken: CANARY.botToken, appToken: CANARY.appToken, signingSecret: CANARY.signingSecret });
  world = await startLabWorld();
  const [consumer] = world.env.LAB_MAAS_KEY!.split(':');
  const kube = world.kube.prod!;
  const raw = parseYaml(world.configText) as Record<string, Record<string, unknown>>;
  // Error paths: a MAAS key with the right consumer and a wrong token (MAAS names the token in its 401),
  // a rack whose SSH port is closed, a cluster whose kube token is wrong.
  raw.maas!['region-bad'] = { url: world.maas.url, apiKey: 'env:BAD_MAAS_KEY' };
  raw.sites!['site-bad'] = { maas: 'region-bad', machines: { zone: 'site-b' }, vmHosts: { default: { user: 'ops', privateKey: 'env:LAB_SSH_KEY' } } };
  raw.sites!['site-deadrack'] = {
    maas: 'region-a',
    machines: { zone: 'nowhere' },
    rack: { resolver: '127.0.0.1:9', probe: 'ssh', ssh: { host: '127.0.0.1', port: 9, user: 'ops', privateKey: 'env:LAB_SSH_KEY', hostKey: `SHA256:${'A'.repeat(43)}` } },
  };
  raw.clusters!['prod-badtoken'] = { maas: 'region-a', kube: { kubeconfig: 'env:BAD_KUBECONFIG', namespace: 'default' } };
  configPath = `${world.configPath}.canary.yaml`;
  writeFileSync(configPath, stringify(raw), { mode: 0o600 });
  env = {
    ...world.env,
    BAD_MAAS_KEY: `${consumer}:${CANARY.badTokenKey}:${CANARY.badTokenSecret}`,
    BAD_KUBECONFIG: kubeconfigFor(kube, { token: CANARY.badKubeToken }),
    SLACK_BOT_TOKEN: CANARY.botToken,
    SLACK_SIGNING_SECRET: CANARY.signingSecret,
    SLACK_APP_TOKEN: CANARY.appToken,
    SLACK_MODE: 'http',
    SLACK_API_URL: emulator.apiUrl,
    PORT: '0',
    REDIS_URL: TEST_REDIS_URL,
    LOG_LEVEL: 'debug',
  };
  canaries.push(...Object.values(CANARY), ...world.env.LAB_MAAS_KEY!.split(':'), ...keyBodyLines(world.env.LAB_SSH_KEY!));
  for (const c of Object.values(world.kube)) canaries.push(c.token);

  // The runtime's own logger writes to stderr: capture exactly what it writes.
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logChunks.push(String(chunk));
    return typeof rest.at(-1) === 'function' ? ((rest.at(-1) as () => void)(), true) : true;
  }) as typeof process.stderr.write;
  try {
    runtime = await startRuntime({ role: 'serve', loaded: loadConfig({ path: configPath, env }), env, prefix, host: '127.0.0.1' });
  } finally {
    process.stderr.write = write;
  }
  appUrl = `http://127.0.0.1:${runtime.port}`;
}, 60_000);

afterAll(() => closeLabServe({ runtime, world, emulator, prefix }));

async function run(text: string, expectPost = true): Promise<void> {
  const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
  const sent = await emulator.sendSlashCommand({ appUrl, text, user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
  expect(sent.status).toBe(200);
  await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { timeoutMs: 10_000, description: `the answer to /maas ${text}` });
  if (expectPost) {
    // The result replaces the answer, or (a plan) is a top-level post; an earlier `all` may still be posting details in its thread.
    await emulator.waitFor((e) => e.resultsIn(LAB_CHANNELS.ops).find((m) => m.seq > seq && (m.via === 'chat.postMessage' || m.responseUrl === sent.responseUrl)), { timeoutMs: 25_000, description: `the result of /maas ${text}` });
  }
}

/** Every key and value under the test prefix, whatever its type. */
async function dumpRedis(): Promise<string> {
  const redis = new Redis(TEST_REDIS_URL);
  const parts: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        parts.push(key);
        if (type === 'string') parts.push((await redis.get(key)) ?? '');
        else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES')));
        else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return parts.join('\n');
}

function leaks(haystack: string): string[] {
  return canaries.filter((c) => haystack.includes(c));
}

describe('secret canaries never leave', () => {
  it('every check, both fix plans, the error paths and the CLI run, and no canary appears anywhere', async () => {
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logChunks.push(String(chunk));
      return typeof rest.at(-1) === 'function' ? ((rest.at(-1) as () => void)(), true) : true;
    }) as typeof process.stderr.write;
    try {
      for (const text of ['dns-check all', 'resolver-check all', 'mac-diff all']) await run(text);
      // The plan phase of both repairs: posted to Slack where the runtime wires repairs, else it fails in the worker.
      for (const text of ['fix-macs site-b', 'fix-dns prod']) {
        await run(text, false);
        const queue = runtime.queues.queue(text.split(' ')[0]!);
        for (let i = 0; i < 200; i++) {
          const counts = await queue.getJobCounts('completed', 'failed');
          if ((counts.completed ?? 0) + (counts.failed ?? 0) > 0) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      for (const text of ['sites', 'alerts', 'audit', 'audit site-b', 'help']) await run(text, false);
      // The error paths: MAAS 401 naming the token, SSH refused, Kubernetes 401.
      await run('mac-diff site-bad');
      await run('resolver-check site-deadrack');
      await run('dns-check prod-badtoken');
      // A MAAS 500 whose JSON body echoes the power parameters (every GET attempt), then one whose text body does.
      const echo = { power_parameters: { power_address: 'qemu+ssh://ops@10.0.0.1/system', power_pass: CANARY.echoedPowerPass, k_g: CANARY.echoedKg }, password: CANARY.echoedPassword };
      world.maas.injectFaults({ status: 500, count: 3, path: /op=power_parameters/, body: { error: 'power query failed', echo } });
      await run('mac-diff site-b');
      world.maas.injectFaults({ status: 500, count: 3, path: /op=power_parameters/, body: `Internal error: power_pass=${CANARY.echoedTextPass} password: ${CANARY.echoedPassword}` });
      await cli(['mac-diff', 'site-b', '--config', configPath], { out: (s) => cliOut.push(s), err: (s) => cliOut.push(s) }, env);
      for (const args of [['mac-diff', 'site-bad', '--json'], ['resolver-check', 'site-deadrack'], ['dns-check', 'prod-badtoken', '--json'], ['sites', '--json']]) {
        await cli([...args, '--config', configPath], { out: (s) => cliOut.push(s), err: (s) => cliOut.push(s) }, env);
      }
      await runAuditCli({ loaded: loadConfig({ path: configPath, env }), env, args: [], json: true, out: (s) => cliOut.push(s), err: (s) => cliOut.push(s), prefix });
    } finally {
      process.stderr.write = write;
    }

    // The error paths were really taken, with the canaries in play.
    expect(world.maas.calls.some((c) => c.status === 401)).toBe(true);
    const channel = emulator.channelMessages(LAB_CHANNELS.ops).map((m) => `${m.text} ${JSON.stringify(m.blocks ?? [])}`).join('\n');
    expect(channel).toMatch(/MAAS region-bad answered 401/);
    expect(channel).toMatch(/cannot open SSH to 127\.0\.0\.1:9: connection refused/);
    // `dns-check all`: the summary, then the failing cluster's details in its thread.
    expect(channel).toMatch(/ERROR: 2 of 3 targets need attention \(dns-check all\)/);
    expect(channel).toMatch(/ERROR: Could not check prod-badtoken/);
    expect(channel).toMatch(/MAAS region-a answered 500 to GET machines\/\?op=power_parameters.*power query failed/);
    expect(cliOut.join('\n')).toMatch(/answered 500 to GET machines\/\?op=power_parameters: \(MAAS's answer is not shown/);
    expect(cliOut.join('\n')).toMatch(/"kind": "mac-diff"/);
    // A configured name that looks like a credential key stays readable in the terminal too.
    expect(cliOut.join('\n')).toMatch(/prod-badtoken: (?!\[redacted\])/);
    // maas-chatops audit --json printed the trail the Slack commands wrote.
    const trail = JSON.parse(cliOut.at(-1) ?? '[]') as { action: string; target?: string; actor: string }[];
    expect(trail).toContainEqual(expect.objectContaining({ action: 'resolver-check', target: 'site-deadrack', actor: LAB_USERS.operator }));

    const records = JSON.stringify({ calls: emulator.calls, messages: emulator.messages, invocations: emulator.invocations });
    const logs = logChunks.join('');
    const redisDump = await dumpRedis();
    const figures = { canaries: canaries.length, slackRecords: emulator.calls.length + emulator.messages.length, logBytes: logs.length, redisBytes: redisDump.length, cliBytes: cliOut.join('').length };
    console.log(`secret canaries: ${JSON.stringify(figures)}`);
    expect(logs.length).toBeGreaterThan(1000);
    expect(redisDump).toContain(':audit');
    expect(leaks(records), 'Slack emulator records').toEqual([]);
    expect(leaks(logs), 'log lines').toEqual([]);
    expect(leaks(redisDump), 'Redis keys and values').toEqual([]);
    expect(leaks(cliOut.join('\n')), 'CLI output').toEqual([]);
  }, 120_000);
});
