import { Redis } from 'ioredis';
import type { LabWorld } from '../../lab/lab-world.ts';
import type { SlackEmulator } from '../../lab/slack-emulator/index.ts';
import type { Runtime } from '../../src/main.ts';
import { deletePrefix, TEST_REDIS_URL } from './redis.ts';

/** Ends a `serve` started on the lab world and the Slack emulator, and deletes its keys from the shared Redis. */
export async function closeLabServe(parts: { runtime?: Runtime; world?: LabWorld; emulator?: SlackEmulator; prefix: string }): Promise<void> {
  await parts.runtime?.close();
  await parts.world?.close();
  await parts.emulator?.close();
  const redis = new Redis(TEST_REDIS_URL);
  await deletePrefix(redis, parts.prefix);
  redis.disconnect();
}
