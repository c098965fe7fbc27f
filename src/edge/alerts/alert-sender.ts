import type { FileAttachment } from '../slack/evidence-files.ts';
import type { AlertMessage } from './alert-message.ts';

/**
 * How alerts reach people. src/edge/slack/gateway.ts is the Slack one; it paces per channel and
 * redacts. A failed call throws an Error whose `slackError` names Slack's code when Slack answered.
 */
export interface AlertSender {
  post(channel: string, message: AlertMessage & { threadTs?: string }): Promise<{ ts: string }>;
  update(channel: string, ts: string, message: AlertMessage): Promise<void>;
  /** A file in a thread (the whole evidence of a large alert); without it the thread says where to get it. */
  upload?(channel: string, threadTs: string, file: FileAttachment): Promise<void>;
}
