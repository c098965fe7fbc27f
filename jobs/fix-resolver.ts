import { fixResolverRepair } from '../src/features/resolver/repair.ts';
import { repairJob } from '../src/engine/repair/repair-job.ts';

/** `/maas fix-resolver <site>` and `maas-chatops fix-resolver <site> [--apply]`. */
export const fixResolverJob = repairJob(fixResolverRepair);
