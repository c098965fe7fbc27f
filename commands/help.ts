import type { CommandDefinition, CommandReply } from '../src/edge/command-types.ts';

export function helpText(commands: readonly CommandDefinition[], problem?: string): string {
  const lines = problem ? [`${problem}`, ''] : [];
  lines.push('Usage: /maas <command> [target]');
  for (const c of commands) lines.push(`  /maas ${c.usage.padEnd(28)} ${c.summary}`);
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
