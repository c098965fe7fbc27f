import type { CommandOutcome } from '../../engine/metrics.ts';
import type { CommandReply } from './command-contract.ts';

/**
 * What became of one invocation, decided where it happened (policy, dispatch, the queue) and
 * read by the audit trail and the metrics alike; neither looks at the reply's words.
 */
export type CommandResult =
  /** The text could not be read as a command (control characters, look-alikes, too long). */
  | { outcome: 'unreadable'; problem: string; reply: CommandReply }
  /** slack.commandChannels, slack.operators or slack.permissions said no. */
  | { outcome: 'refused'; reason: string; reply: CommandReply }
  /** No such subcommand, or not typed as its usage says. */
  | { outcome: 'usage'; reply: CommandReply }
  /** Answered at once, nothing queued (help, sites, alerts…). */
  | { outcome: 'answered'; reply: CommandReply }
  /** Work queued (or joined); the result follows. */
  | { outcome: 'queued'; jobIds: string[]; reply: CommandReply }
  /** The command threw (the queue was down…); the reply says so. */
  | { outcome: 'failed'; error: unknown; reply: CommandReply };

/** The metrics label of a result. */
export function metricsOutcome(result: CommandResult): CommandOutcome {
  switch (result.outcome) {
    case 'unreadable':
    case 'usage':
      return 'usage';
    case 'refused':
      return 'denied';
    case 'failed':
      return 'error';
    case 'queued':
      return 'accepted';
    case 'answered':
      return 'answered';
  }
}
