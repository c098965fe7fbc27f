import { loadConfig } from '../src/core/config.ts';
import type { Logger } from '../src/core/log.ts';
import { startRuntime, type Runtime } from '../src/main.ts';
import { LAB_CHANNELS, startLabWorld, type LabWorld } from './lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from './slack-emulator/index.ts';

/** The lab's peers, the Slack emulator, and `maas-chatops serve` over HTTP on loopback, wired together. */
export interface LabBot {
  world: LabWorld;
  emulator: SlackEmulator;
  runtime: Runtime;
  /** Where the emulator sends signed slash commands and clicks. */
  appUrl: string;
  close(): Promise<void>;
}

/**
 * Slack's pacing as the lab's emulator enforces it: a second post to one channel within a second
 * is 429 (S-POST-RATE, "one message per second per channel"), and a shared file shows some time
 * after files.completeUploadExternal answers (S-FILE-ASYNC; Slack names no figure, half a second
 * is enough to catch a reply posted right after a file).
 */
export const LAB_SLACK_PACING = { postGapMs: 1000, fileShareDelayMs: 500 } as const;

export async function startLabBot(options: { redisUrl: string; prefix: string; log: Logger; watchVmHosts?: boolean }): Promise<LabBot> {
  const emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts], ...LAB_SLACK_PACING });
  let world: LabWorld | undefined;
  try {
    world = await startLabWorld({ watchVmHosts: options.watchVmHosts ?? false });
    const loaded = loadConfig({ path: world.configPath, env: world.env });
    const env = {
      ...world.env,
      SLACK_BOT_TOKEN: emulator.botToken,
      SLACK_SIGNING_SECRET: emulator.signingSecret,
      SLACK_API_URL: emulator.apiUrl,
      SLACK_MODE: 'http',
      PORT: '0',
      REDIS_URL: options.redisUrl,
      ALERTMANAGER_TOKEN: world.alertmanagerToken,
    };
    const runtime = await startRuntime({ role: 'serve', loaded, env, prefix: options.prefix, host: '127.0.0.1', log: options.log });
    const started = world;
    return {
      world: started,
      emulator,
      runtime,
      appUrl: `http://127.0.0.1:${runtime.port}`,
      close: async () => {
        await runtime.close();
        await started.close();
        await emulator.close();
      },
    };
  } catch (err) {
    await world?.close();
    await emulator.close();
    throw err;
  }
}
