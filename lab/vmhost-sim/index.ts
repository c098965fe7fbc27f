/** Simulated libvirt hosts: an SSH server per host whose PATH holds a state-driven `virsh`. */
export { startVmHost, type SimVmHost, type VmHostOptions } from './vm-host.ts';
export { createVmHostDir, renderVirshWrapper, type VmDomain, type VmHostDir, type VmHostState, type VmLifecycleEvent, type VmNic } from './virsh-stub.ts';
export { startLatencyProxy, type LatencyProxy } from './latency-proxy.ts';
export { macLabScenario, type MacLabOptions, type MacLabScenario, type MacLabSite, type MacLabVmHost } from './seed-scenario.ts';
export { startMacLab, type MacLab, type MacLabSetup } from './mac-lab.ts';
