export { macDiffCheck } from './check.ts';
export { gatherMacSnapshot, type MacDiffOptions } from './gather.ts';
