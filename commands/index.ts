import { checkCommand } from './check-command.ts';
import { fixCommand } from './fix-command.ts';
import { helpCommand } from './help.ts';
import { sitesCommand } from './sites.ts';
import { alertsCommand } from './alerts.ts';
import { silenceCommand } from './silence.ts';
import { scanCommand } from './scan.ts';
import { auditCommand } from './audit.ts';
import type { CommandDefinition } from '../src/command-types.ts';

/** Every /maas subcommand, by name. Later work adds one line each. */
export const commandList: CommandDefinition[] = [];

export function registerCommand(command: CommandDefinition): void {
  if (commandList.some((c) => c.name === command.name)) throw new Error(`command ${command.name} registered twice`);
  commandList.push(command);
}

registerCommand(helpCommand(() => commandList));
registerCommand(sitesCommand);
registerCommand(checkCommand({ name: 'dns-check', targetKind: 'cluster', summary: "is the API server's MAAS DNS record what the running control plane needs (and is the controller's hash cache hiding a wipe)" }));
registerCommand(checkCommand({ name: 'resolver-check', targetKind: 'site', summary: "does each rack's node-facing resolver answer its own zone (dig SOA on the rack)" }));
registerCommand(checkCommand({ name: 'mac-diff', targetKind: 'site', summary: 'the MACs MAAS records against the live VMs (virsh domiflist on each VM host), for a whole site' }));
registerCommand(alertsCommand);
registerCommand(silenceCommand);
registerCommand(scanCommand);
registerCommand(auditCommand);
registerCommand(fixCommand({ name: 'fix-macs', targetKind: 'site', summary: "plan the MAC repair for a site (MAAS's records to the live VMs), posted for an approver's Approve" }));
registerCommand(fixCommand({ name: 'fix-dns', targetKind: 'cluster', summary: "plan putting the running control plane's IPs back on the API server record (and its hash), posted for an approver's Approve" }));
registerCommand(fixCommand({ name: 'fix-resolver', targetKind: 'site', summary: "plan the rack resolver repair (the forwarder on the rack, then the subnet's DNS in MAAS), posted for an approver's Approve" }));

export function findCommand(name: string): CommandDefinition | undefined {
  return commandList.find((c) => c.name === name);
}
