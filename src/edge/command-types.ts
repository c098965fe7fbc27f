import type { KnownBlock } from '@slack/types';
import type { Config } from '../core/config.ts';
import type { JobData } from '../engine/job-types.ts';
import type { AlertStore } from './alerts/alert-store.ts';
import type { Submitted } from '../engine/queue/dedup.ts';
import type { AuditLog } from '../engine/audit/audit-log.ts';
import type { CommandAccess } from './slack/command-policy.ts';

/** What a subcommand answers at once (within Slack's 3 seconds). */
export interface CommandReply {
  /** Plain text, also the fallback text of the blocks. */
  text: string;
  /** Block Kit blocks, built by src/edge/slack/render.ts helpers. */
  blocks?: KnownBlock[];
  /** `ephemeral` answers only the requester; `in_channel` is visible to all. */
  visibility: 'ephemeral' | 'in_channel';
  /** The answer is a usage line: the command was not understood as typed. */
  usage?: boolean;
  /**
   * The result of the work this answer announces will replace this message (through the
   * command's response_url) instead of following it as a second post.
   */
  replacedByResult?: boolean;
}

export interface CommandContext {
  config: Config;
  user: string;
  channel: string;
  responseUrl?: string;
  /** "Plan the next batch": which batch of a repair the click asks for. */
  batch?: number;
  /** Queues a job; returns its id. The worker posts the result to the channel. */
  enqueue(jobName: string, data: JobData): Promise<string>;
  /** Like enqueue, and says when the request joined an identical check already queued or running (src/engine/queue/dedup.ts). */
  submit?(jobName: string, data: JobData): Promise<Submitted>;
  /** Alert state (open alerts, silences) for /maas alerts and /maas silence; absent where no Redis is wired. */
  alerts?: AlertStore;
  /** The audit trail, for /maas audit; absent where no Redis is wired. */
  audit?: AuditLog;
}

export interface CommandDefinition {
  name: string;
  usage: string;
  summary: string;
  /** Which slack.permissions list may run it; default `repair` for fix-* and silence, else `check`. */
  access?: CommandAccess;
  run(ctx: CommandContext, args: string[]): Promise<CommandReply>;
}
