import { helpCommand } from './help.ts';
import { sitesCommand } from './sites.ts';
import type { CommandDefinition } from './types.ts';

/** Every /maas subcommand, by name (DESIGN.md principle 8). Later work adds one line each. */
export const commandList: CommandDefinition[] = [];

export function registerCommand(command: CommandDefinition): void {
  if (commandList.some((c) => c.name === command.name)) throw new Error(`command ${command.name} registered twice`);
  commandList.push(command);
}

registerCommand(helpCommand(() => commandList));
registerCommand(sitesCommand);

export function findCommand(name: string): CommandDefinition | undefined {
  return commandList.find((c) => c.name === name);
}
