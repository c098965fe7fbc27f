import { describeError } from '../src/errors.ts';
import { helpReply } from './help.ts';
import { commandList, findCommand } from './index.ts';
import type { CommandContext, CommandReply } from './types.ts';

const MAX_TEXT = 500;

/** Splits `/maas` text into words; refuses control characters and oversized input. */
export function parseCommandText(text: string): { words: string[] } | { problem: string } {
  if (text.length > MAX_TEXT) return { problem: `That command is ${text.length} characters long; the limit is ${MAX_TEXT}.` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/.test(text)) {
    return { problem: 'That command contains control or invisible characters; type it again as plain text.' };
  }
  return { words: text.trim().split(/\s+/).filter(Boolean) };
}

export async function dispatchCommand(ctx: CommandContext, text: string): Promise<CommandReply> {
  const parsed = parseCommandText(text);
  if ('problem' in parsed) return helpReply(commandList, parsed.problem);
  const [name, ...args] = parsed.words;
  if (!name) return helpReply(commandList);
  const command = findCommand(name.toLowerCase());
  if (!command) return helpReply(commandList, `Unknown command "${name.slice(0, 40)}".`);
  try {
    return await command.run(ctx, args);
  } catch (err) {
    return { text: `/maas ${command.name} failed: ${describeError(err)}`, visibility: 'ephemeral' };
  }
}
