import type { App } from '@slack/bolt';
import type { Logger } from '../../core/log.ts';

type ReceiverEvent = Parameters<App['processEvent']>[0];

export interface PayloadGuardOptions {
  log: Logger;
  /** Called once per payload acknowledged without being run (the metrics). */
  onRefused?: (reason: string) => void;
}

/**
 * In front of Bolt's dispatch, in both modes: a payload without the user Bolt reads is acked at
 * once and dropped. Bolt's buildSource (src/App.ts) reads `body.user.id` of every interaction and
 * `'user' in body.event` of every event without a check, so such a payload throws before any
 * listener: over HTTP Bolt answers 500, and in Socket Mode it is never acked, so Slack retries it.
 */
export function guardPayloads(app: App, options: PayloadGuardOptions): void {
  const log = options.log.child({ component: 'slack-payload-guard' });
  const processEvent = app.processEvent.bind(app);
  app.processEvent = async (event: ReceiverEvent) => {
    const problem = unusablePayload(event.body);
    if (problem === undefined) return processEvent(event);
    log.warn({ problem, type: typeOf(event.body) }, 'acknowledged and dropped a Slack payload Bolt cannot read; nothing was run');
    options.onRefused?.('unreadable_payload');
    await event.ack();
  };
}

/** What keeps Bolt from telling who sent a payload, if anything (the checks follow Bolt's getTypeAndConversation and buildSource). */
export function unusablePayload(body: unknown): string | undefined {
  if (!isObject(body)) return 'the payload is not an object';
  if (body.event !== undefined) return unusableEvent(body.event);
  if (body.command !== undefined) return nonEmptyString(body.user_id) ? undefined : 'the command names no user_id';
  if (!isInteraction(body)) return undefined;
  if (!isObject(body.user) || !nonEmptyString(body.user.id)) return 'the interaction names no user.id';
  if (!isObject(body.team) && !nonEmptyString(body.user.team_id)) return 'the interaction names neither team.id nor user.team_id';
  if (body.channel !== undefined && !isObject(body.channel)) return 'the channel is not an object';
  if ((body.type === 'view_submission' || body.type === 'view_closed') && !isObject(body.view)) return 'the view payload has no view';
  return undefined;
}

function unusableEvent(event: unknown): string | undefined {
  if (!isObject(event)) return 'the event is not an object';
  if (event.channel !== undefined && typeof event.channel !== 'string' && !isObject(event.channel)) return 'the event channel is neither an id nor an object';
  for (const field of ['item', 'subteam'] as const) if (event[field] !== undefined && !isObject(event[field])) return `the event ${field} is not an object`;
  return undefined;
}

/** The payload types Bolt dispatches as actions, options, shortcuts or view actions. */
function isInteraction(body: Record<string, unknown>): boolean {
  if (body.name !== undefined || body.actions !== undefined) return true;
  return typeof body.type === 'string' && INTERACTION_TYPES.has(body.type);
}

const INTERACTION_TYPES = new Set(['block_suggestion', 'dialog_submission', 'shortcut', 'message_action', 'view_submission', 'view_closed']);

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function typeOf(body: unknown): string {
  const type = isObject(body) ? body.type : undefined;
  return typeof type === 'string' ? type.slice(0, 40) : 'unknown';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
