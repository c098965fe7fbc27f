import type { EvidenceThread } from '../slack/evidence-thread.ts';
import type { AlertSender } from './alert-sender.ts';

/** An evidence thread's messages, then its files, as replies under `threadTs`; throws at the first that fails. */
export async function postEvidenceReplies(sender: AlertSender, channel: string, threadTs: string, thread: EvidenceThread): Promise<void> {
  for (const message of thread.messages) await sender.post(channel, { ...message, threadTs });
  for (const file of thread.files) await sender.upload?.(channel, threadTs, file);
}
