import type { CommandDefinition, CommandReply } from '../src/edge/command-types.ts';

/**
 * `/maas help` fits a phone screen (at most 12 lines, 2,000 characters, as every main message):
 * each command's usage, grouped by what it is for, one group a line. What a command does is
 * `/maas help <command>`.
 */
const GROUPS: readonly { label: string; holds: (name: string) => boolean }[] = [
  { label: 'Check', holds: (name) => name.endsWith('-check') || name.endsWith('-diff') },
  { label: "Repair (a plan, run on an approver's Approve)", holds: (name) => name.startsWith('fix-') },
  { label: 'Alerts', holds: (name) => ['scan', 'alerts', 'silence'].includes(name) },
  { label: 'Record', holds: (name) => ['timeline', 'audit'].includes(name) },
];
const OTHER = 'Also';

export function helpText(commands: readonly CommandDefinition[], problem?: string): string {
  const lines = problem ? [`${problem}`, ''] : [];
  lines.push('Usage: /maas <command> [target] · /maas help <command> says what one does');
  const grouped = new Map<string, string[]>();
  for (const c of commands) {
    const label = GROUPS.find((g) => g.holds(c.name))?.label ?? OTHER;
    grouped.set(label, [...(grouped.get(label) ?? []), c.usage]);
  }
  for (const label of [...GROUPS.map((g) => g.label), OTHER]) {
    const usages = grouped.get(label);
    if (usages) lines.push(`  ${label}: ${usages.join(' · ')}`);
  }
  return lines.join('\n');
}

/** One command: its usage and what it does. */
export function commandHelpText(command: CommandDefinition): string {
  return `Usage: /maas ${command.usage}\n  ${command.summary}`;
}

export function helpReply(commands: readonly CommandDefinition[], problem?: string): CommandReply {
  return { text: helpText(commands, problem), visibility: 'ephemeral' };
}

export function helpCommand(list: () => readonly CommandDefinition[]): CommandDefinition {
  return {
    name: 'help',
    usage: 'help [command]',
    summary: 'the commands; with a command, what it does',
    run: async (_ctx, args) => {
      const [name] = args;
      if (!name) return helpReply(list());
      const command = list().find((c) => c.name === name);
      if (!command) return helpReply(list(), `No command "${name.slice(0, 40)}": these are the commands.`);
      return { text: commandHelpText(command), visibility: 'ephemeral' };
    },
  };
}
