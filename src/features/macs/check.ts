import { defineCheck } from '../check-spec.ts';
import { evaluateMacs } from './evaluate.ts';
import { gatherMacSnapshot, withDriftWitnesses } from './gather.ts';
import { fixMacsRepair } from './repair.ts';

/** `mac-diff <site>|all`: the MACs MAAS records against the live libvirt domains. */
export const macDiffCheck = defineCheck({
  name: 'mac-diff',
  targetKind: 'site',
  schedule: 'macs',
  summary: 'the MACs MAAS records against the live VMs (virsh domiflist on each VM host), for a whole site',
  fix: { name: 'fix-macs', plans: "the MAC repair for a site (MAAS's records to the live VMs)", repair: fixMacsRepair },
  dedup: 'same-target',
  // Without vmHosts (or their defaults) there is no SSH access to the VM hosts to read.
  appliesTo: (site) => Object.keys(site.vmHosts).length > 0 || Object.keys(site.vmHostDefaults).length > 0,
  gather: (ctx, site) => gatherMacSnapshot(ctx, site.name),
  evaluate: evaluateMacs,
  witness: withDriftWitnesses,
});
