import { defineCheck } from '../check-spec.ts';
import { evaluateDns } from './evaluate.ts';
import { gatherDnsSnapshot } from './gather.ts';
import { fixDnsRepair } from './repair.ts';

/** `dns-check <cluster>|all`: is the API server's MAAS DNS record what the running control plane needs? */
export const dnsCheck = defineCheck({
  name: 'dns-check',
  targetKind: 'cluster',
  schedule: 'dns',
  summary: "is the API server's MAAS DNS record what the running control plane needs (and is the controller's hash cache hiding a wipe)",
  fix: { name: 'fix-dns', plans: "putting the running control plane's IPs back on the API server record (and its hash)", repair: fixDnsRepair },
  dedup: 'same-target',
  appliesTo: () => true,
  gather: gatherDnsSnapshot,
  evaluate: evaluateDns,
});
