export { resolverCheck } from './check.ts';
export { gatherResolverCheck, type ResolverCheckSnapshot } from './gather.ts';
