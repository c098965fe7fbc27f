import type { Report } from '../../core/report.ts';
import type { AuditLog } from './audit-log.ts';
import { buildTimeline, currentVerdict, timelineCounts, timelineMarkdown } from './timeline.ts';

export const TIMELINE_JOB = 'timeline';

function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * A timeline as a report the notifier posts like any other: the verdict is the summary (span,
 * counts, the latest verdict) and the whole timeline is one Markdown file in the message's thread.
 */
export async function timelineReport(audit: AuditLog, target: string, spanMs: number, now = Date.now()): Promise<Report> {
  const since = now - spanMs;
  const { entries, truncated } = await audit.range({ ...(target !== 'all' ? { target } : {}), since });
  const timeline = buildTimeline(entries, { target, since, until: now, truncated });
  const count = timeline.events.length;
  const latest = currentVerdict(timeline.events);
  const verdict = count
    ? `Timeline of ${target} since ${utc(since)}: ${count} event${count === 1 ? '' : 's'} (${timelineCounts(timeline.events)})${latest ? `. Latest verdict: ${latest}` : ''}`
    : `Timeline of ${target} since ${utc(since)}: the audit trail holds nothing for this span`;
  return {
    kind: TIMELINE_JOB,
    target,
    status: 'ok',
    verdict,
    findings: [
      {
        code: 'TIMELINE',
        severity: 'info',
        subject: target,
        summary: `Every event from ${utc(since)} to ${utc(now)}, oldest first${truncated ? ' (the trail holds more than one timeline reads: ask again with a later start for the rest)' : ''}`,
        evidence: { timelineMarkdown: timelineMarkdown(timeline) },
      },
    ],
    startedAt: new Date(now).toISOString(),
    durationMs: Date.now() - now,
  };
}
