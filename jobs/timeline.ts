import { ChatopsError } from '../src/core/errors.ts';
import type { JobDefinition } from '../src/engine/job-types.ts';
import { TIMELINE_JOB, timelineReport } from '../src/engine/audit/timeline-report.ts';

/** `/maas timeline`: the audit trail of a target as one summary message and a Markdown file in its thread. */
export const timelineJob: JobDefinition = {
  name: TIMELINE_JOB,
  run: async (ctx, data) => {
    if (!ctx.audit) throw new ChatopsError('USAGE', 'the timeline needs the audit trail, and this worker has no Redis');
    const spanMs = typeof data.spanMs === 'number' && data.spanMs > 0 ? data.spanMs : 24 * 3_600_000;
    return [await timelineReport(ctx.audit, data.target, spanMs)];
  },
};
