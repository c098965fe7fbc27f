import type { Adapters } from '../src/adapters.ts';
import type { Config } from '../src/config.ts';
import type { Logger } from '../src/log.ts';
import type { ReplyTarget } from '../src/notifier.ts';
import type { Report } from '../src/report.ts';

export interface JobContext {
  config: Config;
  adapters: Adapters;
  log: Logger;
  signal?: AbortSignal;
}

/** Job data as stored in Redis (clear text): names and Slack ids only, never a secret. */
export interface JobData {
  target: string;
  reply?: ReplyTarget;
  requestedBy?: string;
  [key: string]: unknown;
}

export interface JobDefinition {
  name: string;
  /** Returns one report per target (a target of `all` gives several). */
  run(ctx: JobContext, data: JobData): Promise<Report[]>;
}
