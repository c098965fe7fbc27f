import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { auditCommand } from '../command-audit.ts';
import type { CommandReply, CommandRouter } from './command-contract.ts';
import { runInvocation, type CommandEdge } from './command-edge.ts';
import { slackUserGroups } from './user-groups.ts';
import { parseInvocation } from './invocation.ts';
import { ALERT_ACTIONS } from '../alerts/alert-message.ts';
import type { AlertStore } from '../alerts/alert-store.ts';
import { isScanCheck, SCAN_CHECKS } from '../alerts/scan-checks.ts';
import type { AuditRecorder } from '../../engine/audit/audit-log.ts';
import type { Config, SlackPolicy } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { deliverReply } from './deliver-reply.ts';
import type { SlackGateway } from './gateway.ts';
import type { Enqueue } from './guarded-enqueue.ts';

export interface AlertActionOptions {
  config: Config;
  /** The subcommands a button stands for (commands/dispatch.ts commandRouter). */
  commands: CommandRouter;
  enqueue: Enqueue;
  log: Logger;
  audit?: AuditRecorder;
  alerts?: AlertStore;
}

/**
 * An alert's buttons are the slash commands they name: "Plan fix" is `/maas fix-… <target>`,
 * "Re-check now" is `/maas scan <target> <check>`, "Silence 1h" is `/maas silence <target> 1h`, run through the same dispatch and the same
 * operator and permission checks. The value comes from our own message but is checked again:
 * a forged click names a check or target the config does not know and is refused.
 */
export function commandForAlertAction(actionId: string, value: string | undefined, config: Config): string | undefined {
  let parsed: { check?: unknown; target?: unknown };
  try {
    parsed = JSON.parse(value ?? '') as typeof parsed;
  } catch {
    return undefined;
  }
  const { check, target } = parsed;
  if (!isScanCheck(check) || typeof target !== 'string') return undefined;
  const known = SCAN_CHECKS[check].targetKind === 'site' ? config.sites : config.clusters;
  if (!Object.hasOwn(known, target)) return undefined;
  if (actionId === ALERT_ACTIONS.planFix) return `${SCAN_CHECKS[check].fix} ${target}`;
  if (actionId === ALERT_ACTIONS.recheck) return `scan ${target} ${check}`;
  if (actionId === ALERT_ACTIONS.silence) return `silence ${target} 1h`;
  return undefined;
}

/** "Plan the next batch" carries the number of the batch it asks for; an alert's "Plan fix" does not (the first). */
export function nextBatchOf(value: string | undefined): number | undefined {
  try {
    const batch = (JSON.parse(value ?? '') as { batch?: unknown }).batch;
    return typeof batch === 'number' && Number.isInteger(batch) && batch >= 1 && batch <= 10_000 ? batch : undefined;
  } catch {
    return undefined;
  }
}

/** Clicks arrive from the alert channel, where the bot posts alerts even if /maas is not typed there. */
function policyForAlertClicks(policy: SlackPolicy): SlackPolicy {
  if (!policy.commandChannels.length || !policy.alertChannel) return policy;
  return { ...policy, commandChannels: [...policy.commandChannels, policy.alertChannel] };
}

export function alertActionHandlers(options: AlertActionOptions): (app: App, slack: SlackGateway) => void {
  const edge: CommandEdge = {
    config: options.config,
    router: options.commands,
    enqueue: options.enqueue,
    alerts: options.alerts,
    log: options.log,
  };
  return (app, slack) => {
    edge.groups = slackUserGroups(slack.reader, options.config.slack.userGroupCacheMs);
    for (const actionId of Object.values(ALERT_ACTIONS)) {
      app.action<BlockAction<ButtonAction>>(actionId, async ({ ack, body, action }) => {
        await ack();
        const user = body.user.id;
        const channel = body.channel?.id ?? '';
        const text = commandForAlertAction(actionId, action.value, options.config);
        const batch = actionId === ALERT_ACTIONS.planFix ? nextBatchOf(action.value) : undefined;
        let reply: CommandReply;
        if (!text) {
          reply = { text: 'That button names no configured check or target; nothing was done.', visibility: 'ephemeral' };
        } else {
          const invocation = { ...parseInvocation({ text, user, channel, team: body.team?.id, responseUrl: body.response_url, source: 'button' }), ...(batch ? { batch } : {}) };
          const result = await runInvocation(edge, invocation, policyForAlertClicks(options.config.slack));
          reply = result.reply;
          await auditCommand(options.audit, invocation, result);
        }
        await deliverReply(reply, { channel, user, responseUrl: body.response_url }, slack, options.log).catch((err: unknown) =>
          options.log.warn({ err: describeError(err) }, 'could not answer an alert button'),
        );
      });
    }
  };
}
