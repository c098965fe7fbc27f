import { Writable } from 'node:stream';
import pino from 'pino';
import type { JobData } from '../../src/engine/job-types.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import type { Logger } from '../../src/core/log.ts';
import { commandRouter } from '../../commands/dispatch.ts';
import { createSlackApp, type SlackApp, type SlackAppOptions } from '../../src/edge/slack/app.ts';
import type { SlackEmulator } from '../../lab/slack-emulator/index.ts';

/** Shared set-up for the Slack e2e tests: a config, a recording queue, a captured log. */

export const TEST_CONFIG_YAML = `
slack:
  commandChannels: [C0OPS]
  approvers: [U0LEAD1]
maas:
  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: env:MAAS_KEY }
sites:
  site-b: { maas: region-a, machines: { zone: site-b } }
clusters:
  prod: { maas: region-a }
`;

export function testConfig(yaml = TEST_CONFIG_YAML): Config {
  return parseConfigText(yaml, { path: 'slack-e2e.yaml', env: { MAAS_KEY: 'ckey0123456789abcd:tkey0123456789abcd:tsecret0123456789ab' } }).config;
}

export interface RecordingQueue {
  calls: { jobName: string; data: JobData }[];
  enqueue: (jobName: string, data: JobData) => Promise<string>;
}

/** A queue that records what it is given; `behaviour` decides what each call does. */
export function recordingQueue(behaviour: (n: number) => Promise<string> = async (n) => `job-${n}`): RecordingQueue {
  const calls: RecordingQueue['calls'] = [];
  return {
    calls,
    enqueue: (jobName, data) => {
      calls.push({ jobName, data });
      return behaviour(calls.length);
    },
  };
}

export interface CapturedLog {
  log: Logger;
  lines: Record<string, unknown>[];
}

export function capturedLog(): CapturedLog {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

/**
 * The real Bolt app in HTTP mode on a free loopback port, speaking to the emulator: the test
 * config, the commands' router, no redaction; `extra` overrides any of it.
 */
export async function startHttpBot(emulator: SlackEmulator, enqueue: SlackAppOptions['enqueue'], extra: Partial<SlackAppOptions> = {}): Promise<SlackApp> {
  const bot = await createSlackApp({
    commands: commandRouter,
    config: testConfig(),
    botToken: emulator.botToken,
    signingSecret: emulator.signingSecret,
    mode: 'http',
    port: 0,
    host: '127.0.0.1',
    slackApiUrl: emulator.apiUrl,
    enqueue,
    log: capturedLog().log,
    redact: (s) => s,
    ...extra,
  });
  await bot.start();
  return bot;
}
