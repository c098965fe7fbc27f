export { parseDhcpdConf, type IncludeFile, type ParseResult } from './parse-conf.ts';
export { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse-limits.ts';
export { subnetOption6, clientOption6, type NodeOption6, type Option6Variant, type SubnetOption6, type SubnetOption6Lookup, type Option6Options } from './subnet-option6.ts';
export { ANY_NODE, type ClientFacts } from './condition.ts';
export { whereText, type DhcpdConf, type Problem, type Where } from './conf-model.ts';
export { readRackDhcp, notReadReason, sourceOf, dhcpdReadCommand, dhcpdPaths, includeReadCommand, servingOf, MAAS_DHCPD_CONFIG_PATHS, type DhcpObservation, type DhcpServed, type DhcpVariant, type DhcpdServing } from './rack-read.ts';
