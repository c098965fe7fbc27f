import { checkCommand } from './check-command.ts';
import { fixCommand } from './fix-command.ts';
import { helpCommand } from './help.ts';
import { sitesCommand } from './sites.ts';
import { alertsCommand } from './alerts.ts';
import { silenceCommand } from './silence.ts';
import { scanCommand } from './scan.ts';
import { auditCommand } from './audit.ts';
import { timelineCommand } from './timeline.ts';
import { CHECKS, COMMAND_NAMES, FIX_COMMANDS, type BuiltInCommand, type CommandName } from '../src/features/registry.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';

/** Every /maas subcommand, in help order (src/features/registry.ts COMMAND_NAMES). */
export const commandList: CommandDefinition[] = [];

export function registerCommand(command: CommandDefinition): void {
  if (commandList.some((c) => c.name === command.name)) throw new Error(`command ${command.name} registered twice`);
  commandList.push(command);
}

const builtIn: Record<BuiltInCommand, CommandDefinition> = {
  help: helpCommand(() => commandList),
  sites: sitesCommand,
  alerts: alertsCommand,
  silence: silenceCommand,
  scan: scanCommand,
  audit: auditCommand,
  timeline: timelineCommand,
};
const byName = new Map<CommandName, CommandDefinition>([
  ...(Object.entries(builtIn) as [BuiltInCommand, CommandDefinition][]),
  ...CHECKS.map((spec) => [spec.name, checkCommand(spec)] as const),
  ...FIX_COMMANDS.map(({ fix, targetKind }) => [fix.name, fixCommand({ name: fix.name, targetKind, summary: `plan ${fix.plans}, posted for an approver's Approve` })] as const),
]);
for (const name of COMMAND_NAMES) {
  const command = byName.get(name);
  if (!command) throw new Error(`command ${name} has no definition`);
  registerCommand(command);
}

export function findCommand(name: string): CommandDefinition | undefined {
  return commandList.find((c) => c.name === name);
}
