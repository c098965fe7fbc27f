import type { Report } from '../core/report.ts';
import type { PlanMessageView } from './repair/plan-view.ts';

/** Where a job's result goes back to: never a secret, safe to keep in job data. */
export interface ReplyTarget {
  channel: string;
  user?: string;
  threadTs?: string;
  responseUrl?: string;
  /** The command's "running" answer was posted through `responseUrl`: the result replaces it. */
  replaceRunning?: boolean;
  /** When the command was answered (ms): a response_url lasts 30 minutes. */
  askedAt?: number;
  /** The result shows elsewhere (a plan message edited in place): only an error is posted here. */
  errorsOnly?: boolean;
}

/** How workers speak to people without knowing Slack. */
export interface Notifier {
  postReports(target: ReplyTarget, reports: Report[]): Promise<void>;
  postError(target: ReplyTarget, message: string): Promise<void>;
  /** Repairs: posts a plan (with Approve / Reject while it is pending); returns where it landed. */
  postPlan?(target: ReplyTarget, view: PlanMessageView): Promise<MessageRef>;
  /** Repairs: redraws a plan message (who approved, the results). */
  updatePlan?(ref: MessageRef, view: PlanMessageView): Promise<void>;
  /** Repairs: a line of progress in the plan message's thread. */
  postInThread?(ref: MessageRef, text: string): Promise<void>;
}

/** A message the notifier posted: to update it or reply in its thread. */
export interface MessageRef {
  channel: string;
  ts: string;
}
