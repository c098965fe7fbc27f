import type { Config } from '../src/config.ts';
import type { JobData } from '../jobs/types.ts';

/** What a subcommand answers at once (within Slack's 3 seconds). */
export interface CommandReply {
  /** Plain text, also the fallback text of the blocks. */
  text: string;
  /** Block Kit blocks, built by src/slack/render.ts helpers. */
  blocks?: unknown[];
  /** `ephemeral` answers only the requester; `in_channel` is visible to all. */
  visibility: 'ephemeral' | 'in_channel';
}

export interface CommandContext {
  config: Config;
  user: string;
  channel: string;
  responseUrl?: string;
  /** Queues a job; returns its id. The worker posts the result to the channel. */
  enqueue(jobName: string, data: JobData): Promise<string>;
}

export interface CommandDefinition {
  name: string;
  usage: string;
  summary: string;
  run(ctx: CommandContext, args: string[]): Promise<CommandReply>;
}
