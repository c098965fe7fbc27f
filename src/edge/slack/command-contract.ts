import type { CommandContext, CommandReply } from '../command-types.ts';
import type { SubcommandRef } from './command-policy.ts';
import type { Invocation } from './invocation.ts';

/*
 * How the Slack edge reaches the subcommands (top-level commands/) without importing them: the
 * composition root hands it a CommandRouter (commands/dispatch.ts).
 */

export type { CommandContext, CommandReply } from '../command-types.ts';

/** What dispatch made of an invocation the policy let through. */
export type DispatchOutcome =
  | { kind: 'unreadable'; reply: CommandReply }
  | { kind: 'unknown'; reply: CommandReply }
  | { kind: 'ran'; reply: CommandReply }
  | { kind: 'failed'; reply: CommandReply; error: unknown };

/** The subcommands, as the composition root hands them to the Slack edge. */
export interface CommandRouter {
  find(name: string): SubcommandRef | undefined;
  dispatch(ctx: CommandContext, invocation: Invocation): Promise<DispatchOutcome>;
}
