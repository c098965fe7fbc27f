import type { ActionsBlock, ContextBlock, KnownBlock, SectionBlock } from '@slack/types';
import { formatDuration } from '../../core/duration.ts';
import type { Finding, Report, Severity, Status } from '../../core/report.ts';
import { ALERT_ACTIONS } from '../alerts/alert-action-ids.ts';
import { isScanCheck } from '../alerts/scan-checks.ts';
import { findingBrief } from './finding-brief.ts';
import { findingCount } from './finding-count.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { clipText, codeSpan, escapeMrkdwn, inline, slackDate } from './mrkdwn.ts';
import { nextStep, type NextStep } from './next-step.ts';
import { withDateTokens } from './slack-dates.ts';
import { oneLine } from '../../core/one-line.ts';
import { withoutLead } from '../../core/without-lead.ts';
import { sayLess, wordCount } from './say-less.ts';

/**
 * A check's answer as the channel shows it, read on a phone at 3 a.m.: the verdict first, one line
 * per finding (same-code findings beyond MAX_PER_CODE counted), one *Next step*, and a button that
 * plans that repair. Everything else, whole, is in the answer's thread (evidence-thread.ts).
 * A healthy answer is two lines.
 */

export interface AnswerMessage {
  text: string;
  blocks: KnownBlock[];
}

export interface AnswerOptions {
  /** The requester may run repairs: the answer carries the button that plans the next step's repair. */
  repairButton?: boolean;
  /** Said in the footer about where the rest is (default: the evidence is in the thread). */
  evidenceNote?: string;
}

/**
 * Limits the main message is held to (test/e2e/lab.test.ts and test/e2e/message-budget.test.ts
 * check every message the lab posts): `words` is the most a verdict or *Next step* line says.
 */
export const ANSWER_LIMITS = { findingLines: 6, perCode: 3, maxLines: 12, maxChars: 2000, words: 25 } as const;
/** The verdict's own words: the line's status word and `kind target:` take the other three. */
const VERDICT_WORDS = ANSWER_LIMITS.words - 3;

export const STATUS_WORD: Record<Status, string> = { ok: 'OK', warning: 'WARNING', critical: 'CRITICAL', error: 'ERROR' };
export const STATUS_ICON: Record<Status, string> = { ok: ':white_check_mark:', warning: ':warning:', critical: ':red_circle:', error: ':x:' };
export const SEVERITY_ICON: Record<Severity, string> = { info: ':information_source:', warning: ':warning:', critical: ':red_circle:', error: ':x:' };
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };

/** Mrkdwn of text written for people: escaped, its times as date tokens. */
export function slackText(text: string): string {
  return withDateTokens(escapeMrkdwn(text));
}

type VerdictOf = Pick<Report, 'status' | 'kind' | 'target' | 'verdict'> & Partial<Pick<Report, 'findings' | 'plan' | 'results'>>;

export function verdictLine(report: VerdictOf, word = STATUS_WORD[report.status]): string {
  return `${STATUS_ICON[report.status]} *${word}* · ${inline(report.kind)} ${inline(report.target)}: ${slackText(oneLine(shortVerdict(report)))}`;
}

/**
 * The verdict as the first line says it: not naming `kind target` a second time, and in at most
 * VERDICT_WORDS words when there is a thread to hold the rest (evidence-thread.ts says it whole).
 */
export function shortVerdict(report: VerdictOf): string {
  const own = withoutKindAndTarget(report);
  return hasThread(report) ? sayLess(own, VERDICT_WORDS) : own;
}

/** The verdict as the check wrote it, when the first line says less of it (the thread then says it whole). */
export function verdictInFull(report: VerdictOf): string | undefined {
  const own = withoutKindAndTarget(report);
  return shortVerdict(report) === own ? undefined : report.verdict;
}

/** Whether the message has a thread under it: findings, a plan's steps or a run's results. */
export function hasThread(report: Partial<Pick<Report, 'findings' | 'plan' | 'results'>>): boolean {
  return Boolean(report.findings?.length || report.plan?.steps.length || report.results?.length);
}

/** `fix-macs site-b done: 12 of 12…` under `fix-macs site-b:` reads `Done: 12 of 12…`. */
function withoutKindAndTarget({ kind, target, verdict }: VerdictOf): string {
  const rest = withoutLead(verdict, `${kind} ${target}`);
  return rest ? `${rest[0]!.toUpperCase()}${rest.slice(1)}` : verdict;
}

export function renderAnswer(report: Report, options: AnswerOptions = {}): AnswerMessage {
  const text = clipText(`${STATUS_WORD[report.status]}: ${inline(report.verdict)}`, 3000);
  const blocks: KnownBlock[] = [section(verdictLine(report))];
  const lines = findingLines(report.findings);
  if (lines.length) blocks.push(section(lines.join('\n')));
  const step = report.status === 'ok' ? undefined : nextStep(report);
  if (step) blocks.push(section(nextStepLine(step)));
  if (step?.repair && options.repairButton && isScanCheck(report.kind)) blocks.push(planButton(report, step));
  blocks.push(footer(report, options.evidenceNote ?? 'the evidence is in the thread'));
  return { text, blocks };
}

/** The problems, worst first, one line each; info findings (notes) stay in the thread. */
export function findingLines(findings: readonly Finding[], max: number = ANSWER_LIMITS.findingLines): string[] {
  const problems = findings
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.severity !== 'info')
    .sort((a, b) => RANK[b.f.severity] - RANK[a.f.severity] || a.i - b.i)
    .map(({ f }) => f);
  const shown: Finding[] = [];
  const perCode = new Map<string, number>();
  for (const f of problems) {
    const n = perCode.get(f.code) ?? 0;
    if (n >= ANSWER_LIMITS.perCode || shown.length >= max - 1) continue;
    perCode.set(f.code, n + 1);
    shown.push(f);
  }
  const rest = problems.filter((f) => !shown.includes(f));
  if (rest.length === 1 && shown.length < max) shown.push(rest.pop()!);
  const lines = problems.filter((f) => shown.includes(f)).map(findingLine);
  if (rest.length) lines.push(restLine(rest, new Set(shown.map((f) => f.subject))));
  return lines;
}

export function findingLine(f: Finding): string {
  const { subject, brief } = findingBrief(f);
  return `${SEVERITY_ICON[f.severity]} ${codeSpan(f.code, 60)} ${subject ? `${clipText(inline(subject), 80)}: ` : ''}${slackText(oneLine(brief))}`;
}

/**
 * `…and 297 more: `MAC_DRIFT` ×297 (site-c-vm004, site-c-vm005, … +292)`, naming only subjects
 * the lines above do not (a machine's second drifted NIC is counted, not named again).
 */
function restLine(rest: readonly Finding[], named: ReadonlySet<string>): string {
  const counts = new Map<string, number>();
  for (const f of rest) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
  const codes = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([c, n]) => `${codeSpan(c, 60)} ×${n}`);
  const subjects = [...new Set(rest.map((f) => f.subject))].filter((s) => !named.has(s));
  if (!subjects.length) return `…and ${rest.length} more: ${codes.join(', ')}`;
  const shown = subjects.slice(0, 3).map((s) => clipText(inline(s), 40));
  const more = subjects.length > shown.length ? `, … +${subjects.length - shown.length}` : '';
  return `…and ${rest.length} more: ${codes.join(', ')} (${shown.join(', ')}${more})`;
}

const NEXT_STEP = '*Next step:*';

/** The step and the findings it covers in at most ANSWER_LIMITS.words words after its label (the thread has each fix whole). */
export function nextStepLine(step: NextStep): string {
  const covered = step.covers.length > 1 ? ` _(covers ${coverList(step.covers)})_` : '';
  const room = ANSWER_LIMITS.words - wordCount(covered);
  let text = escapeMrkdwn(sayLess(step.text, room));
  if (step.command) text = text.replace(escapeMrkdwn(step.command), codeSpan(step.command));
  return clipText(`${NEXT_STEP} ${withDateTokens(text)}${covered}`, 900);
}

function coverList(findings: readonly Finding[]): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
  return [...counts].map(([c, n]) => `${c}${n > 1 ? ` ×${n}` : ''}`).join(', ');
}

/** The alert's "Plan fix": the same `/maas fix-… <target>` dispatch, permission checks and approval path (alert-actions.ts). */
export function planButton(report: Pick<Report, 'kind' | 'target'>, step: Pick<NextStep, 'repair'>): ActionsBlock {
  const value = JSON.stringify({ check: report.kind, target: report.target });
  const label = clipText(`Plan ${step.repair} ${report.target}`, SLACK_MESSAGE_LIMITS.buttonText);
  return {
    type: 'actions',
    block_id: 'answer_actions',
    elements: [{ type: 'button', action_id: ALERT_ACTIONS.planFix, text: { type: 'plain_text', text: label }, style: 'primary', value }],
  };
}

function footer(report: Report, note: string): ContextBlock {
  const n = report.findings.length;
  const started = Date.parse(report.startedAt);
  const when = Number.isFinite(started) ? slackDate(started) : escapeMrkdwn(report.startedAt);
  const took = report.durationMs < 1000 ? `${report.durationMs} ms` : formatDuration(report.durationMs);
  const evidence = n ? ` · ${note}` : '';
  const text = `${findingCount(report.findings)}${evidence} · started ${when} · took ${took}`;
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clipText(text, SLACK_MESSAGE_LIMITS.contextElementText) }] };
}

export function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: clipText(text, SLACK_MESSAGE_LIMITS.sectionText) } };
}
