import type { WebClient } from '@slack/web-api';
import type { FileAttachment } from './evidence-files.ts';
import { escapeMrkdwn } from './mrkdwn.ts';

/**
 * Shares a text file in a thread through Slack's external upload flow
 * (https://docs.slack.dev/messaging/working-with-files#upload): files.getUploadURLExternal
 * announces the name and length, the bytes go to the URL it returns (no token: the URL is the
 * permission), files.completeUploadExternal shares the file. Needs the `files:write` scope.
 */
export async function uploadTextFile(client: WebClient, where: { channel: string; threadTs?: string | undefined }, file: FileAttachment): Promise<void> {
  const bytes = Buffer.from(file.content, 'utf8');
  const announced = await client.files.getUploadURLExternal({ filename: file.filename, length: bytes.length });
  if (!announced.upload_url || !announced.file_id) throw new Error('Slack gave no upload URL for the file');
  const sent = await fetch(announced.upload_url, { method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: bytes, signal: AbortSignal.timeout(30_000) });
  await sent.arrayBuffer().catch(() => undefined);
  if (!sent.ok) throw new Error(`the upload URL answered HTTP ${sent.status}`);
  await client.files.completeUploadExternal({
    files: [{ id: announced.file_id, title: file.title }],
    channel_id: where.channel,
    ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
    initial_comment: escapeMrkdwn(`${file.title}: ${file.filename}`),
  } as never);
}
