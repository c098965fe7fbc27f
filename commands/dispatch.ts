import { describeError } from '../src/core/errors.ts';
import type { CommandRouter, DispatchOutcome } from '../src/edge/slack/command-contract.ts';
import { parseInvocation, type Invocation } from '../src/edge/slack/invocation.ts';
import { helpReply } from './help.ts';
import { commandList, findCommand } from './index.ts';
import type { CommandContext, CommandReply } from '../src/edge/command-types.ts';

export { parseCommandText } from '../src/edge/slack/invocation.ts';

/** Runs the subcommand an invocation names; unreadable and unknown ones get the help. */
export async function dispatchInvocation(ctx: CommandContext, invocation: Invocation): Promise<DispatchOutcome> {
  if (invocation.command === undefined) return { kind: 'unreadable', reply: helpReply(commandList, invocation.problem) };
  if (!invocation.command) return { kind: 'ran', reply: helpReply(commandList) };
  const command = findCommand(invocation.command);
  if (!command) return { kind: 'unknown', reply: helpReply(commandList, `Unknown command "${invocation.command.slice(0, 40)}".`) };
  try {
    return { kind: 'ran', reply: await command.run(ctx, invocation.args) };
  } catch (err) {
    return { kind: 'failed', error: err, reply: { text: `/maas ${command.name} failed: ${describeError(err)}`, visibility: 'ephemeral' } };
  }
}

/** The subcommands as the Slack edge takes them from the composition root. */
export const commandRouter: CommandRouter = { find: findCommand, dispatch: dispatchInvocation };

/** A command's answer from its text, as typed after `/maas` (tests and scripts). */
export async function dispatchCommand(ctx: CommandContext, text: string): Promise<CommandReply> {
  const invocation = parseInvocation({ text, user: ctx.user, channel: ctx.channel, source: 'slash_command', responseUrl: ctx.responseUrl });
  return (await dispatchInvocation(ctx, invocation)).reply;
}
