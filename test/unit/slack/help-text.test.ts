import { describe, expect, it } from 'vitest';
import { helpText } from '../../../commands/help.ts';
import { commandList, findCommand } from '../../../commands/index.ts';
import { ANSWER_LIMITS } from '../../../src/edge/slack/answer-render.ts';
import type { CommandContext } from '../../../src/edge/command-types.ts';

describe('/maas help', () => {
  it('names every command with its usage within the main-message limits (12 lines, 2,000 characters)', () => {
    const text = helpText(commandList);
    expect(text.split('\n').length).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
    expect(text.length).toBeLessThanOrEqual(ANSWER_LIMITS.maxChars);
    for (const c of commandList) expect(text, c.name).toContain(c.usage);
    expect(text.split('\n')[0]).toMatch(/^Usage: \/maas <command>/);
  });

  it('`/maas help <command>` says what that command does; an unknown one lists the commands', async () => {
    const help = findCommand('help')!;
    const ctx = {} as CommandContext;
    const one = await help.run(ctx, ['dns-check']);
    expect(one.text).toBe(`Usage: /maas ${findCommand('dns-check')!.usage}\n  ${findCommand('dns-check')!.summary}`);
    const unknown = await help.run(ctx, ['nope']);
    expect(unknown.text.split('\n')[0]).toBe('No command "nope": these are the commands.');
    expect(unknown.text).toContain(findCommand('fix-macs')!.usage);
  });
});
