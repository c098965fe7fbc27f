/** The MAAS simulator: start it with a scenario built from these builders. */
export { startMaasSimulator, type MaasFault, type MaasSimCall, type MaasSimulator, type MaasSimulatorOptions } from './server.ts';
export {
  DEFAULT_RACK_ID,
  DEFAULT_USER,
  dnsResource,
  iface,
  machine,
  normaliseMac,
  rackController,
  randomApiKey,
  scenario,
  subnet,
  virshPower,
  type InterfaceInput,
  type MaasScenario,
  type MachineInput,
  type PowerState,
  type RackControllerInput,
  type ScenarioInput,
  type SimDnsResource,
  type SimInterface,
  type SimInterfaceType,
  type SimMachine,
  type SimRackController,
  type SimService,
  type SimSubnet,
  type SimVlan,
  type SubnetInput,
} from './scenario.ts';
export type { SimRules } from './sim-http.ts';
export { configureDhcp, option6For, renderDhcpdConf, type SimDhcp, type SimDhcpRack, type SimIpRange } from './dhcp.ts';
export { discovery, type DiscoveryInput, type SimDiscovery } from './discoveries.ts';
export { maasEventTime, nodeEvent, type EventInput, type SimEvent } from './events.ts';
export { INTERFACE_STATE_CONFLICT } from './interfaces.ts';
export { INVALID_API_KEY } from './oauth-verify.ts';
