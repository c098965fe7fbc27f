export { dnsCheck } from './check.ts';
export { gatherDnsSnapshot } from './gather.ts';
