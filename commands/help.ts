import type { CommandDefinition, CommandReply } from '../src/edge/command-types.ts';

export function helpText(commands: readonly CommandDefinition[], problem?: string): string {
  const lines = problem ? [`${problem}`, ''] : [];
  lines.push('Usage: /maas <command> [target]');
  // Every summary starts in one column, after the longest usage: none runs into its usage.
  const width = Math.max(...commands.map((c) => c.usage.length)) + 2;
  for (const c of commands) lines.push(`  /maas ${c.usage.padEnd(width)}${c.summary}`);
  return lines.join('\n');
}

export function helpReply(commands: readonly CommandDefinition[], problem?: string): CommandReply {
  return { text: helpText(commands, problem), visibility: 'ephemeral' };
}

export function helpCommand(list: () => readonly CommandDefinition[]): CommandDefinition {
  return {
    name: 'help',
    usage: 'help',
    summary: 'this list',
    run: async () => helpReply(list()),
  };
}
