import type { Report } from '../../core/report.ts';
import type { PlanState, StoredPlan } from './plan-store.ts';

/** What a plan message shows, platform-neutral: the notifier and the approval handler render it. */
export interface PlanMessageView {
  planId: string;
  /** The plan report; with results once it ran. */
  report: Report;
  state: PlanState;
  requester: string;
  expiresAt: number;
  decidedBy?: string;
  decidedAt?: number;
  /** Distinct approvers the plan needs, when more than one. */
  required?: number;
  /** Who approved so far and when, first first. */
  approvals?: readonly { user: string; at: number }[];
  /** False when no approver is configured: the plan is shown without buttons. */
  approvable: boolean;
  /** One more line, e.g. why a plan was superseded, or the re-check after the run. */
  note?: string;
  /** Subjects left for the next plans (repair.maxSubjects): a finished plan offers the next batch. */
  deferred?: number;
  /** Which batch this plan is, when the repair goes in batches. */
  batch?: number;
}

export function planView(stored: StoredPlan, options: { approvers: readonly string[]; report?: Report; state?: PlanState; note?: string }): PlanMessageView {
  const view: PlanMessageView = {
    planId: stored.plan.id,
    report: options.report ?? stored.report,
    state: options.state ?? stored.state,
    requester: stored.requester,
    expiresAt: stored.expiresAt,
    approvable: options.approvers.length > 0,
  };
  if (stored.decidedBy) view.decidedBy = stored.decidedBy;
  if (stored.decidedAt !== undefined) view.decidedAt = stored.decidedAt;
  if (stored.required && stored.required > 1) view.required = stored.required;
  if (stored.approvals?.length) view.approvals = stored.approvals;
  if (options.note) view.note = options.note;
  if (stored.plan.deferred?.length) view.deferred = stored.plan.deferred.length;
  if (stored.plan.batch) view.batch = stored.plan.batch;
  return view;
}
