/**
 * A `/maas` command or an alert button as the Slack edge reads it, once: who, where, which
 * subcommand with which arguments, and where the answer may go. Everything after the edge
 * (policy, dispatch, audit, metrics) reads this, never Slack's payload or the raw text again.
 */
export interface Invocation {
  /** The text after `/maas` as Slack sent it (the audit quotes it). */
  text: string;
  /** The subcommand, lower-cased; '' for an empty command (help). Undefined when the text is unreadable. */
  command: string | undefined;
  args: string[];
  /** Why the text cannot be read as a command (control characters, look-alike letters, too long). */
  problem?: string;
  user: string;
  channel: string;
  team?: string;
  /** Valid 30 minutes and for 5 posts; absent for scans and the CLI. */
  responseUrl?: string;
  /** A slash command, or an alert button that stands for one. */
  source: 'slash_command' | 'button';
  /** "Plan the next batch": which batch of a repair too large for one plan it asks for. */
  batch?: number;
}

const MAX_TEXT = 500;
/** Names are at most 63 characters (config NAME_RE); durations and counts are shorter. */
const MAX_WORD = 100;
/** Spaces pasted from documents and chat clients: read as ordinary spaces. */
const UNICODE_SPACES = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/g;

/**
 * Splits `/maas` text into words. Refuses oversized input, control and invisible characters
 * (bidi overrides, zero-width), and anything else outside ASCII: every name, duration and
 * keyword is ASCII, so a non-ASCII letter is a look-alike (Cyrillic "о" for "o") at best.
 */
export function parseCommandText(text: string): { words: string[] } | { problem: string } {
  if (text.length > MAX_TEXT) return { problem: `That command is ${text.length} characters long; the limit is ${MAX_TEXT}.` };
  // eslint-disable-next-line no-control-regex, no-misleading-character-class -- these characters are what we look for
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufe00-\ufe0f]|[\u{e0000}-\u{e007f}]/u.test(text)) {
    return { problem: 'That command contains control or invisible characters (such as bidi overrides or zero-width spaces); type it again as plain text.' };
  }
  const spaced = text.replace(UNICODE_SPACES, ' ');
  const foreign = /[^\x20-\x7e\t\n]/u.exec(spaced);
  if (foreign) {
    const code = `U+${foreign[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return {
      problem: `That command contains "${foreign[0]}" (${code}), which is not plain ASCII. Commands, site and cluster names are ASCII, so this is probably a look-alike letter pasted from elsewhere; type it again.`,
    };
  }
  const words = spaced.trim().split(/\s+/).filter(Boolean);
  const long = words.find((w) => w.length > MAX_WORD);
  if (long) return { problem: `"${long.slice(0, 20)}…" is ${long.length} characters long; names are at most 63.` };
  return { words };
}

export interface InvocationSource {
  text: string | undefined;
  user: string;
  channel: string;
  team?: string | undefined;
  responseUrl?: string | undefined;
  source: Invocation['source'];
}

/** Parses the command text once; an unreadable text still yields an invocation (its `problem` says why). */
export function parseInvocation(from: InvocationSource): Invocation {
  const text = from.text ?? '';
  const where = {
    text,
    user: from.user,
    channel: from.channel,
    source: from.source,
    ...(from.team ? { team: from.team } : {}),
    ...(from.responseUrl ? { responseUrl: from.responseUrl } : {}),
  };
  const parsed = parseCommandText(text);
  if ('problem' in parsed) return { ...where, command: undefined, args: [], problem: parsed.problem };
  const [name, ...args] = parsed.words;
  return { ...where, command: name?.toLowerCase() ?? '', args };
}

/** The subcommand as a metrics label and audit action: `help` for an empty command. */
export function commandName(invocation: Invocation): string {
  return invocation.command === undefined ? '(unreadable input)' : invocation.command || 'help';
}
