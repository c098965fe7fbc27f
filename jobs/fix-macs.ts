import { fixMacsRepair } from '../src/features/macs/repair.ts';
import { repairJob } from '../src/engine/repair/repair-job.ts';

/** `/maas fix-macs <site>` and `maas-chatops fix-macs <site> [--apply]`. */
export const fixMacsJob = repairJob(fixMacsRepair);
