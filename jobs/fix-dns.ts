import { fixDnsRepair } from '../src/features/dns/repair.ts';
import { repairJob } from '../src/engine/repair/repair-job.ts';

/** `/maas fix-dns <cluster>` and `maas-chatops fix-dns <cluster> [--apply]`. */
export const fixDnsJob = repairJob(fixDnsRepair);
