export { dhcpCheck } from './check.ts';
export { gatherDhcp, type DhcpSnapshot } from './gather.ts';
