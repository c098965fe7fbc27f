import { FIX_COMMANDS } from '../src/features/registry.ts';
import { repairExecuteJob } from '../src/engine/repair/execute-job.ts';

/** The run of an approved repair, queued by the Approve button: one queue for every repair the registry names. */
export const executeRepairJob = repairExecuteJob(FIX_COMMANDS.map(({ fix }) => fix.repair));
