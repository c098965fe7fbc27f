export { startRack, type CachedRecord, type RackMode, type RackOptions, type SimulatedRack } from './rack.ts';
export { createDigStub, digPathPrefix, onPath, type DigStub } from './dig-on-path.ts';
export { startDnsmasq, type DnsmasqMode, type DnsmasqOptions, type RunningDnsmasq } from './dnsmasq.ts';
export { startLabRack, type LabRack, type LabRackOptions } from './lab-rack.ts';
