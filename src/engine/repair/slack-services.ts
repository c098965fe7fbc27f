import { ChatopsError } from '../../core/errors.ts';
import type { JobContext } from '../job-types.ts';
import type { Notifier } from '../notifier.ts';
import type { PlanStore } from './plan-store.ts';
import type { RepairKind } from './plan.ts';

export type SlackNotifier = Notifier & Required<Pick<Notifier, 'postPlan' | 'updatePlan' | 'postInThread'>>;
export interface SlackServices {
  plans: PlanStore;
  notifier: SlackNotifier;
}

/** What a repair from Slack needs in the worker's context: the plan store and a notifier that posts plans. */
export function slackServices(ctx: JobContext, kind: RepairKind | 'repair-execute'): SlackServices {
  const { plans, notifier } = ctx;
  if (!plans || !notifier?.postPlan || !notifier.updatePlan || !notifier.postInThread) {
    throw new ChatopsError('CONFIG_INVALID', `${kind} from Slack needs the plan store and a notifier that posts plans in the worker's context`, {
      hint: 'Whoever runs the bot: give startJobWorkers a context with plans (createPlanStore) and the Slack notifier',
    });
  }
  return { plans, notifier: notifier as SlackNotifier };
}
