import { runCheck, type RunnableCheck } from '../src/features/run-check.ts';
import type { JobDefinition } from '../src/engine/job-types.ts';

/** A check's job: `<check> <target>|all`, one report per target (src/features/run-check.ts). */
export function checkJob(spec: RunnableCheck): JobDefinition {
  return { name: spec.name, run: (ctx, data) => runCheck(ctx, spec, data.target) };
}
