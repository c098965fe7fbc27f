import { createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../../lab/private-redis.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { commandRouter } from '../../commands/dispatch.ts';
import { ChatopsError } from '../../src/core/errors.ts';
import { createSlackApp } from '../../src/edge/slack/app.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { neverSent, outcomeUnknown } from '../../src/edge/slack/post-once.ts';
import { capturedLog, recordingQueue, testConfig } from './slack-harness.ts';

/*
 * Slack that cannot be reached is the network's fault, not the token's: the bot names the host,
 * tries again with a doubling wait, and a post that never left is a failure, not "maybe posted".
 */

/** A listener that accepts each connection and drops it at once, counting them. */
async function droppingServer(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, connections: () => connections };
}

let servers: Server[] = [];
afterEach(async () => {
  for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  servers = [];
});

function appAt(slackApiUrl: string, log = capturedLog().log) {
  // The SDK's own backoff (which retries a request that never left) is off: the tries counted are the bot's.
  const gateway = createSlackGateway({ token: 'xoxb-unchecked-token', slackApiUrl, redact: (s) => s, log, retryConfig: { retries: 0 } });
  return createSlackApp({
    gateway,
    commands: commandRouter,
    config: testConfig(),
    botToken: 'xoxb-unchecked-token',
    signingSecret: 'a-signing-secret',
    mode: 'http',
    port: 0,
    host: '127.0.0.1',
    slackApiUrl,
    enqueue: recordingQueue().enqueue,
    log,
    redact: (s) => s,
    startRetry: { attempts: 3, firstDelayMs: 5 },
  });
}

describe('an unreachable Slack at start', () => {
  it('is reported as the host not reached (not as a refused token), after trying again', async () => {
    const dropping = await droppingServer();
    servers.push(dropping.server);
    const { log, lines } = capturedLog();
    const app = await appAt(`http://127.0.0.1:${dropping.port}/api/`, log);
    const err = (await app.start().catch((e: unknown) => e)) as ChatopsError;
    expect(err).toBeInstanceOf(ChatopsError);
    expect(err.code).toBe('SLACK_UNREACHABLE');
    expect(err.describe()).toMatch(new RegExp(`^Slack could not be reached at 127\\.0\\.0\\.1:${dropping.port} \\(.+; 3 tries\\)\\. Check the network path`));
    expect(err.describe()).not.toMatch(/token \(|refused the bot token/);
    // Three tries of auth.test; none of them was retried blindly inside the SDK.
    expect(dropping.connections()).toBe(3);
    expect(lines.filter((l) => l.msg === 'Slack could not be reached to check the bot token; trying again').map((l) => l.attempt)).toEqual([1, 2]);
  });

  it('names the connect error when nothing listens', async () => {
    const port = await freePort();
    const app = await appAt(`http://127.0.0.1:${port}/api/`);
    await expect(app.start()).rejects.toThrow(new RegExp(`Slack could not be reached at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED; 3 tries\\)`));
  });
});

describe('a post that never left', () => {
  it('is known not to be stored: the failure is thrown, not answered as a post of unknown outcome', async () => {
    const port = await freePort();
    const client = new WebClient('xoxb-x', { slackApiUrl: `http://127.0.0.1:${port}/api/`, retryConfig: { retries: 0 } });
    const err = await client.chat.postMessage({ channel: 'C0ALERTS', text: 'x' }).catch((e: unknown) => e);
    expect(neverSent(err)).toBe(true);
    expect(outcomeUnknown(err)).toBe(false);

    const gateway = createSlackGateway({ token: 'xoxb-x', slackApiUrl: `http://127.0.0.1:${port}/api/`, redact: (s) => s, log: capturedLog().log, retryConfig: { retries: 1, minTimeout: 1, maxTimeout: 1 } });
    await expect(gateway.post('C0ALERTS', { text: 'drift' })).rejects.toThrow(/Slack could not be reached/);
    await gateway.close();
  });
});
