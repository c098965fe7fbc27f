/**
 * The baseline: a bare Bolt app in HTTP mode that acknowledges /maas and does nothing else
 * (no enqueue, no answer, no log line). Run as its own process; tells its parent its port.
 * Env: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL (the emulator: Bolt calls auth.test).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';

const receiver = new HTTPReceiver({ signingSecret: process.env.SLACK_SIGNING_SECRET ?? '', endpoints: '/slack/events' });
const app = new App({
  token: process.env.SLACK_BOT_TOKEN ?? '',
  receiver,
  logLevel: LogLevel.WARN,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL ?? '' },
});
app.command('/maas', async ({ ack }) => {
  await ack();
});

const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
process.on('message', (m: { type: string }) => {
  if (m.type === 'exit') void app.stop().then(() => process.disconnect?.());
});
