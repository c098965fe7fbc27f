import type { AlertStore } from '../alerts/alert-store.ts';
import type { AuditLog } from '../../engine/audit/audit-log.ts';
import type { Config, SlackPolicy } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { JobData } from '../../engine/job-types.ts';
import type { Submitted } from '../../engine/queue/dedup.ts';
import type { CommandContext, CommandRouter } from './command-contract.ts';
import { commandRefusal } from './command-policy.ts';
import type { CommandResult } from './command-result.ts';
import type { Invocation } from './invocation.ts';
import type { UserGroupReader } from './user-groups.ts';

export interface CommandEdge {
  config: Config;
  router: CommandRouter;
  enqueue: (jobName: string, data: JobData) => Promise<string>;
  submit?: ((jobName: string, data: JobData) => Promise<Submitted>) | undefined;
  audit?: AuditLog | undefined;
  alerts?: AlertStore | undefined;
  /** The members of user groups listed in slack.operators and slack.permissions. */
  groups?: UserGroupReader | undefined;
  log: Logger;
}

/**
 * Authorizes and dispatches one invocation and says what became of it. Never throws: a failure
 * is a `failed` result whose reply says what went wrong.
 */
export async function runInvocation(edge: CommandEdge, invocation: Invocation, policy: SlackPolicy = edge.config.slack): Promise<CommandResult> {
  const jobIds: string[] = [];
  try {
    const refusal = await commandRefusal(policy, invocation.user, invocation.channel, invocation.command ? edge.router.find(invocation.command) : undefined, edge.groups);
    if (refusal) return { outcome: 'refused', reason: refusal, reply: { text: refusal, visibility: 'ephemeral' } };
    const dispatched = await edge.router.dispatch(contextFor(edge, invocation, jobIds), invocation);
    switch (dispatched.kind) {
      case 'unreadable':
        return { outcome: 'unreadable', problem: invocation.problem ?? '', reply: dispatched.reply };
      case 'unknown':
        return { outcome: 'usage', reply: dispatched.reply };
      case 'failed':
        return { outcome: 'failed', error: dispatched.error, reply: dispatched.reply };
      case 'ran':
        if (dispatched.reply.usage) return { outcome: 'usage', reply: dispatched.reply };
        return jobIds.length ? { outcome: 'queued', jobIds, reply: dispatched.reply } : { outcome: 'answered', reply: dispatched.reply };
    }
  } catch (err) {
    edge.log.error({ user: invocation.user, channel: invocation.channel, err: describeError(err) }, '/maas failed');
    return { outcome: 'failed', error: err, reply: { text: `/maas failed: ${describeError(err)}`, visibility: 'ephemeral' } };
  }
}

/** The subcommand's view: the queue records what it queued, so the result can say so. */
function contextFor(edge: CommandEdge, invocation: Invocation, jobIds: string[]): CommandContext {
  const { enqueue, submit } = edge;
  return {
    config: edge.config,
    user: invocation.user,
    channel: invocation.channel,
    ...(invocation.responseUrl ? { responseUrl: invocation.responseUrl } : {}),
    ...(invocation.batch ? { batch: invocation.batch } : {}),
    enqueue: async (name, data) => {
      const id = await enqueue(name, data);
      jobIds.push(id);
      return id;
    },
    ...(submit
      ? {
          submit: async (name: string, data: JobData) => {
            const submitted = await submit(name, data);
            jobIds.push(submitted.id);
            return submitted;
          },
        }
      : {}),
    ...(edge.audit ? { audit: edge.audit } : {}),
    ...(edge.alerts ? { alerts: edge.alerts } : {}),
  };
}
