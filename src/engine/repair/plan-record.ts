import { z } from 'zod';
import { ChatopsError } from '../../core/errors.ts';
import type { Report } from '../../core/report.ts';
import { planStepSchema } from './plan-step.ts';
import type { RepairPlan } from './plan.ts';

const stepResult = z.looseObject({ subject: z.string(), action: z.string(), outcome: z.enum(['verified', 'skipped', 'refused', 'failed']), detail: z.string() });
const finding = z.looseObject({
  code: z.string(),
  severity: z.enum(['info', 'warning', 'critical', 'error']),
  subject: z.string(),
  summary: z.string(),
  evidence: z.record(z.string(), z.unknown()),
  fix: z.string().optional(),
});

const repairPlanSchema = z.looseObject({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  kind: z.enum(['fix-macs', 'fix-dns', 'fix-resolver']),
  target: z.string(),
  steps: z.array(planStepSchema),
  refusals: z.array(stepResult),
  findings: z.array(finding),
  verdict: z.string(),
  deferred: z.array(z.string()).optional(),
});

/** The report is only ever shown, never acted on: its shape is not checked beyond being one. */
const recordSchema = z.object({ plan: repairPlanSchema, report: z.looseObject({ kind: z.string(), verdict: z.string() }) });

/**
 * A plan as read back from Redis, checked step by step against the kinds this version runs. A
 * record that is corrupt, or was written by a version whose steps differ, is refused here: it is
 * never approved or executed, and the message says how to get a fresh one.
 */
export function parsePlanRecord(planId: string, json: string): { plan: RepairPlan; report: Report } {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw unusable(planId, 'it is not valid JSON');
  }
  const parsed = recordSchema.safeParse(raw);
  if (!parsed.success) throw unusable(planId, parsed.error.issues.map((i) => `${pathOf(i.path)}: ${i.message}`).join('; '));
  return parsed.data as unknown as { plan: RepairPlan; report: Report };
}

/** plan.steps[2].params.interfaceId */
function pathOf(path: readonly PropertyKey[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('');
}

function unusable(planId: string, why: string): ChatopsError {
  return new ChatopsError('GUARD_REFUSED', `plan ${planId} as stored cannot be run by this version (${why}), so it was not run`, {
    hint: 'Run the /maas fix command again for a fresh plan',
  });
}
