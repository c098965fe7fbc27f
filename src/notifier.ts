import type { Report } from './report.ts';

/** Where a job's result goes back to: never a secret, safe to keep in job data. */
export interface ReplyTarget {
  channel: string;
  user?: string;
  threadTs?: string;
  responseUrl?: string;
}

/** How workers speak to people without knowing Slack (DESIGN.md principle 1). */
export interface Notifier {
  postReports(target: ReplyTarget, reports: Report[]): Promise<void>;
  postError(target: ReplyTarget, message: string): Promise<void>;
}
