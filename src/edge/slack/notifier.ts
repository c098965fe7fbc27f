import type { RetryOptions } from '@slack/web-api';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { Notifier, ReplyTarget } from '../../engine/notifier.ts';
import type { PlanMessageView } from '../../engine/repair/plan-view.ts';
import type { Redactor } from '../../core/redact.ts';
import type { Report } from '../../core/report.ts';
import { renderSummary, summaryOrder } from './all-summary.ts';
import { answerWithEvidence } from './answer-with-evidence.ts';
import { renderAnswer } from './answer-render.ts';
import type { FileAttachment } from './evidence-files.ts';
import { renderEvidence } from './evidence-thread.ts';
import { createSlackGateway, type SlackGateway, type SlackMetrics } from './gateway.ts';
import { slackErrorOf, type OutgoingMessage } from './message-budget.ts';
import { toSlackText } from './mrkdwn.ts';
import { planThread, renderPlanMessage } from './plan-render.ts';
import { renderReports } from './render.ts';
import { answerKey, type AnswerBoard } from './answer-board.ts';
import { placeForResult } from './replace-running.ts';
import { ResponseUrlError } from './response-url.ts';
import { INVITE_COMMAND } from './invite.ts';

export type { SlackMetrics } from './gateway.ts';

/** The notifier speaks through a gateway; tests and tools without one give its options instead. */
export type SlackNotifierOptions = (
  | { gateway: SlackGateway; log: Logger }
  | {
      token: string;
      slackApiUrl?: string;
      redact: Redactor;
      log: Logger;
      /** WebClient retries (network errors and 429 after Retry-After). */
      retryConfig?: RetryOptions;
      onFallback?: (slackError: string) => void;
      metrics?: SlackMetrics;
      /** Least time between two messages to one channel; default 1100 ms. */
      threadIntervalMs?: number;
      /** Where commands' running answers are: the bot's board, when bot and worker are not one process. */
      answers?: AnswerBoard;
      timeoutMs?: number;
    }
) & {
  /** Whether the requester may run repairs: their answer carries the button that plans one (absent: no button). */
  mayRepair?: (user: string | undefined) => boolean;
  /** Counts a result posted beside its running answer (two messages) and why. */
  onSecondMessage?: (reason: string) => void;
  /** Counts the failing targets of an `all` run whose details had no thread to go in (the bot may not post in the channel). */
  onDetailsWithheld?: (targets: number) => void;
  /** How long a result waits for the bot to say where its running answer is; default 10 s. */
  answerWaitMs?: number;
};

/** Slack answers that no retry will change. */
const PERMANENT = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'invalid_blocks',
  'msg_blocks_too_long',
  'no_text',
  'restricted_action',
]);

/** Posting failed; `slackError` is Slack's code (channel_not_found…) when Slack answered. */
export class SlackDeliveryError extends Error {
  readonly slackError: string | undefined;
  /** False when trying again cannot help (the channel is gone, the token is wrong…). */
  readonly retryable: boolean;

  constructor(message: string, slackError: string | undefined, retryable: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SlackDeliveryError';
    this.slackError = slackError;
    this.retryable = retryable;
  }
}

/** Where a channel refuses the bot, the command's response_url (valid 30 minutes) still reaches it. */
const FALL_BACK_TO_RESPONSE_URL = new Set(['channel_not_found', 'not_in_channel']);

/** An `all` summary that cannot have a thread: it says where the details are instead. */
function withDetailsElsewhere(message: OutgoingMessage, reports: readonly Report[], failing: number): OutgoingMessage {
  const kinds = [...new Set(reports.map((r) => r.kind))];
  const cli = kinds.length === 1 ? `\`maas-chatops ${kinds[0]} all --json\`` : 'the CLI with `--json`';
  const note = `The details of the ${failing === 1 ? 'failing target' : `${failing} failing targets`} cannot follow in a thread: the bot is not in this channel. Run ${cli} in a terminal for them, or type \`${INVITE_COMMAND}\` here.`;
  return { text: `${message.text}\n${note}`, ...(message.blocks ? { blocks: [...message.blocks, { type: 'context', elements: [{ type: 'mrkdwn', text: note }] }] } : {}) };
}

function gatewayOf(options: SlackNotifierOptions): SlackGateway {
  if ('gateway' in options) return options.gateway;
  return createSlackGateway({
    token: options.token,
    ...(options.slackApiUrl ? { slackApiUrl: options.slackApiUrl } : {}),
    redact: options.redact,
    log: options.log,
    ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
    ...(options.onFallback ? { onFallback: options.onFallback } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.threadIntervalMs !== undefined ? { intervalMs: options.threadIntervalMs } : {}),
    ...(options.answers ? { answers: options.answers } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
}

export function createSlackNotifier(options: SlackNotifierOptions): Notifier {
  const slack = gatewayOf(options);
  const log = options.log.child({ component: 'slack-notifier' });

  /**
   * A new message; where the channel refuses the bot, the command's response_url (with
   * `viaResponseUrl`, the message as it reads there). Returns its ts when known.
   */
  async function post(target: ReplyTarget, message: OutgoingMessage, paced = false, resultOf?: string, viaResponseUrl = message): Promise<string | undefined> {
    try {
      const { ts } = await slack.post(target.channel, { ...message, threadTs: target.threadTs }, { what: `post to ${target.channel}`, paced, ...(resultOf ? { resultOf } : {}) });
      return ts || undefined;
    } catch (err) {
      const slackError = slackErrorOf(err);
      log.error({ channel: target.channel, slackError, err: describeError(err) }, 'could not post to Slack');
      if (slackError && FALL_BACK_TO_RESPONSE_URL.has(slackError) && target.responseUrl) {
        const sent = await slack.respond(target.responseUrl, viaResponseUrl, { visibility: 'in_channel', replaceOriginal: false }).then(
          () => true,
          (e: unknown) => (log.error({ err: describeError(e) }, 'the response_url refused the message too'), false),
        );
        if (sent) return undefined;
      }
      throw new SlackDeliveryError(`Slack refused the message for ${target.channel}${slackError ? ` (${slackError})` : ''}`, slackError, !(slackError && PERMANENT.has(slackError)), err);
    }
  }

  /** Files and thread replies after the message reached Slack: a failure is logged, the message stands. */
  async function inThread(where: ReplyTarget, what: string, send: () => Promise<unknown>): Promise<void> {
    try {
      await send();
    } catch (err) {
      log.error({ channel: where.channel, slackError: slackErrorOf(err), err: describeError(err) }, `could not ${what}`);
    }
  }

  async function upload(where: ReplyTarget, threadTs: string, files: readonly FileAttachment[]): Promise<void> {
    for (const file of files) await inThread(where, `upload ${file.filename}`, () => slack.upload(where.channel, threadTs, file));
  }

  /**
   * The result's first message: it edits the command's "running" answer, or goes through the
   * response_url where the bot cannot post (see replace-running.ts), else it is a new post.
   * `viaResponseUrl`: the message as it reads when it goes through the response_url (no thread).
   */
  async function first(target: ReplyTarget, message: OutgoingMessage, viaResponseUrl = message): Promise<string | undefined> {
    const place = await placeForResult(slack, target, log, {
      ...(options.answerWaitMs !== undefined ? { waitMs: options.answerWaitMs } : {}),
      ...(options.onSecondMessage ? { onSecondMessage: options.onSecondMessage } : {}),
    });
    if (place.kind === 'edit') {
      try {
        await slack.update(target.channel, place.ts, message, { what: 'replace the running answer with the result', paced: false });
        return place.ts;
      } catch (err) {
        const slackError = slackErrorOf(err);
        log.warn({ channel: target.channel, slackError, err: describeError(err) }, 'could not edit the running answer: the result is posted as a new message');
        options.onSecondMessage?.(slackError ?? 'edit_failed');
      }
    }
    if (place.kind === 'response_url') {
      try {
        await slack.respond(place.url, viaResponseUrl, { visibility: 'in_channel', replaceOriginal: false }, 'post the result through the response_url');
        return undefined;
      } catch (err) {
        if (err instanceof ResponseUrlError && err.mayHaveArrived) {
          log.error({ channel: target.channel, err: describeError(err) }, 'the response_url failed after the result may have arrived: not posted again');
          return undefined;
        }
        const why = err instanceof ResponseUrlError && err.usedUp ? 'the response_url is used up or expired' : `the response_url refused it (${describeError(err)})`;
        log.warn({ channel: target.channel }, `${why}: the result is posted through the Web API`);
      }
    }
    // Posted anew, the result names its command in its metadata: a bot that cannot ask Redis
    // whether the result came first finds it in the channel (deliver-reply.ts).
    return post(target, message, false, target.replaceRunning && target.responseUrl ? answerKey(target.responseUrl) : undefined, viaResponseUrl);
  }

  const answerOptions = (target: ReplyTarget) => ({ repairButton: options.mayRepair?.(target.user) ?? false });

  /**
   * The evidence under a short answer, in its thread. Without a thread (answered through a
   * response_url where the bot may not post) the long form follows as a message of its own.
   */
  async function postEvidence(target: ReplyTarget, thread: string | undefined, report: Report): Promise<void> {
    const evidence = renderEvidence(report);
    if (!evidence.messages.length && !evidence.files.length) return;
    if (!thread) {
      await inThread(target, `post the evidence of ${report.target}`, () => post({ ...target, replaceRunning: false }, renderReports([report])));
      return;
    }
    const where = { channel: target.channel, threadTs: thread };
    for (const message of evidence.messages) await inThread(where, `post the evidence of ${report.target}`, () => post(where, message));
    await upload(where, thread, evidence.files);
  }

  /** One target: a short answer, its evidence in its thread. Several: a summary, then each failing target in the thread. */
  async function postReports(target: ReplyTarget, reports: Report[]): Promise<void> {
    if (reports.length <= 1) {
      const [report] = reports;
      if (!report) {
        await first(target, renderReports(reports));
        return;
      }
      const ts = await first(target, renderAnswer(report, answerOptions(target)));
      await postEvidence(target, target.threadTs ?? ts, report);
      return;
    }
    const summary = renderSummary(reports);
    const failing = summaryOrder(reports).filter((r) => r.status !== 'ok');
    const ts = await first(target, summary.message, failing.length ? withDetailsElsewhere(summary.message, reports, failing.length) : summary.message);
    const thread = target.threadTs ?? ts;
    if (!thread) {
      // Answered through the response_url (the bot may not post in the channel): no thread to post in.
      if (failing.length) {
        log.warn({ channel: target.channel, targets: failing.length }, 'no thread for the details of an all run (the bot may not post in this channel): they are not posted; the answer points to the CLI');
        options.onDetailsWithheld?.(failing.length);
      }
      return;
    }
    const where = { channel: target.channel, threadTs: thread };
    // Slack shares a file some time after files.completeUploadExternal answers (S-FILE-ASYNC): a
    // reply posted after a file could show above it. So the files go last, each named in its comment.
    const files = summary.file ? [summary.file] : [];
    // Paced by the gateway: about one reply a second in the channel.
    for (const report of failing) {
      const evidence = renderEvidence(report);
      const evidenceNote = evidence.files.length ? 'the evidence follows, its files at the end of this thread' : 'the evidence follows';
      const details = answerWithEvidence(renderAnswer(report, { ...answerOptions(target), evidenceNote }), evidence);
      for (const message of details.messages) await inThread(where, `post the details of ${report.target}`, () => post(where, message, true));
      files.push(...details.files);
    }
    await upload(where, thread, files);
  }

  const failed = (what: string, channel: string) => (err: unknown) => {
    const slackError = slackErrorOf(err);
    log.error({ channel, slackError, err: describeError(err) }, `could not ${what}`);
    throw new SlackDeliveryError(`Slack refused to ${what} in ${channel}${slackError ? ` (${slackError})` : ''}`, slackError, !(slackError && PERMANENT.has(slackError)), err);
  };
  const planContent = (view: PlanMessageView): OutgoingMessage => renderPlanMessage(view);


  return {
    postReports,
    postError: async (target, message) => {
      await first(target, { text: `:x: ${toSlackText(message)}` });
    },
    // Repairs: the plan message with its buttons, its updates and its thread (src/edge/slack/plan-render.ts).
    postPlan: async (target, view) => {
      const res = await slack.post(target.channel, planContent(view), { what: 'post a plan', paced: false }).catch(failed('post a plan', target.channel));
      if (res.ts) {
        const where = { channel: target.channel, threadTs: res.ts };
        const thread = planThread(view);
        for (const message of thread.messages) await inThread(where, 'post the steps of a plan', () => post(where, message));
        await upload(where, res.ts, thread.files);
      }
      return { channel: target.channel, ts: res.ts };
    },
    updatePlan: async (ref, view) => {
      await slack.update(ref.channel, ref.ts, planContent(view), { what: 'update a plan', paced: false }).catch(failed('update a plan', ref.channel));
    },
    postInThread: async (ref, text) => {
      await slack.post(ref.channel, { text: toSlackText(text), threadTs: ref.ts }, { what: 'post in a plan thread', paced: false }).catch(failed('post in a plan thread', ref.channel));
    },
  };
}
