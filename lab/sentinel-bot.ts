import { parseConfigText } from '../src/core/config.ts';
import type { Logger } from '../src/core/log.ts';
import { startRuntime, type Runtime } from '../src/main.ts';
import { LAB_CHANNELS, startLabWorld, type LabWorld } from './lab-world.ts';
import { startSentinelLab, type SentinelLab } from './redis-sentinel-lab.ts';
import { startSlackEmulator, type SlackEmulator } from './slack-emulator/index.ts';

/** `maas-chatops serve` on the lab's simulators and Slack emulator, with its Redis behind Sentinel (redis-sentinel-lab.ts). */
export interface SentinelBot {
  lab: SentinelLab;
  world: LabWorld;
  emulator: SlackEmulator;
  runtime: Runtime;
  /** The bot's HTTP address: /slack/events, /readyz. */
  url: string;
  close(): Promise<void>;
}

export interface SentinelBotOptions {
  prefix: string;
  log: Logger;
  /** Appended to the lab's config file (e.g. a schedules: block). */
  extraConfig?: string;
  downAfterMs?: number;
}

export async function startSentinelBot(options: SentinelBotOptions): Promise<SentinelBot> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const lab = await startSentinelLab({ prefix: options.prefix, ...(options.downAfterMs ? { downAfterMs: options.downAfterMs } : {}) });
    closers.push(() => lab.close());
    const emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
    closers.push(() => emulator.close());
    const world = await startLabWorld();
    closers.push(() => world.close());
    const loaded = parseConfigText(world.configText + (options.extraConfig ?? ''), { path: world.configPath, env: world.env });
    const env = { ...world.env, ...lab.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, SLACK_MODE: 'http', PORT: '0' };
    const runtime = await startRuntime({ role: 'serve', loaded, env, prefix: options.prefix, host: '127.0.0.1', log: options.log });
    closers.push(() => runtime.close());
    return { lab, world, emulator, runtime, url: `http://127.0.0.1:${runtime.port}`, close };
  } catch (err) {
    await close();
    throw err;
  }
}
