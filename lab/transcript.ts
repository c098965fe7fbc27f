import type { EmulatedMessage, Invocation } from './slack-emulator/index.ts';

interface TextObject {
  text?: string;
}
interface BlockLike {
  type: string;
  text?: TextObject;
  fields?: TextObject[];
  elements?: { type?: string; text?: TextObject | string }[];
}

function unescape(s: string, users: Record<string, string> = {}): string {
  return s
    .replace(/<@([A-Z0-9]+)>/g, (m, id: string) => (users[id] ? `@${users[id]}` : m))
    .replace(/<!date\^\d+\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<#(C[A-Z0-9]+)>/g, '#$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function elementText(e: NonNullable<BlockLike['elements']>[number]): string {
  if (e.type === 'button') return `[ ${typeof e.text === 'string' ? e.text : (e.text?.text ?? '')} ]`;
  return typeof e.text === 'string' ? e.text : (e.text?.text ?? '');
}

/** A Block Kit message as a person would read it in a terminal. */
export function blocksText(blocks: unknown[], users: Record<string, string> = {}): string[] {
  const lines: string[] = [];
  for (const raw of blocks as BlockLike[]) {
    if (raw.type === 'divider') continue;
    if (raw.type === 'actions') {
      lines.push((raw.elements ?? []).map(elementText).join('  '));
      continue;
    }
    if (raw.text?.text) lines.push(...unescape(raw.text.text, users).split('\n'));
    for (const f of raw.fields ?? []) if (f.text) lines.push(...unescape(f.text, users).split('\n'));
    if (raw.type === 'context') lines.push((raw.elements ?? []).map((e) => unescape(elementText(e), users)).join('  '));
  }
  return lines;
}

export interface TranscriptNames {
  users: Record<string, string>;
  bot: string;
  /** Channel names by id; messages outside `mainChannel` say where they went. */
  channels?: Record<string, string>;
  mainChannel?: string[];
}

function channelLabel(channel: string, names: TranscriptNames): string {
  const name = names.channels?.[channel];
  return name && !names.mainChannel?.includes(channel) ? ` in ${name}` : '';
}

function bodyLines(content: { text: string; blocks?: unknown[] }, names: TranscriptNames): string[] {
  return content.blocks?.length ? blocksText(content.blocks, names.users) : unescape(content.text, names.users).split('\n');
}

function messageLines(m: EmulatedMessage, names: TranscriptNames, fromSeq: number): string[] {
  const who = m.ephemeral ? `${names.bot} (only visible to ${names.users[m.user ?? ''] ?? m.user})` : names.bot;
  const original = m.updates.length && m.updates[0]!.seq >= fromSeq ? m.original : m;
  const prefix = m.threadTs ? '    ↳ ' : '';
  const pad = m.threadTs ? '      ' : '  ';
  const files = (m.files ?? []).map((f) => `${pad}[file ${f.filename}: ${(f.content ?? '').split('\n').filter(Boolean).length} lines]`);
  return [`${prefix}${who}${channelLabel(m.channel, names)}:`, ...bodyLines(original, names).map((l) => `${pad}${l}`), ...files];
}

/**
 * An edit is shown by what changed for a reader: its headline and its closing lines. A command's
 * answer edited into its result (its first edit) reads in full: it is the result.
 */
function updateLines(m: EmulatedMessage, update: EmulatedMessage['updates'][number], names: TranscriptNames): string[] {
  const body = bodyLines(update, names);
  if (m.metadata?.event_payload.answer_to !== undefined && update === m.updates[0]) return [`${names.bot} replaced its answer with the result${channelLabel(m.channel, names)}:`, ...body.map((l) => `  ${l}`)];
  const shown = body.length > 5 ? [...body.slice(0, 2), '…', ...body.slice(-3)] : body;
  return [`${names.bot} edited its message${channelLabel(m.channel, names)}:`, ...shown.map((l) => `  ${l}`)];
}

function invocationLine(i: Invocation, names: TranscriptNames): string {
  const who = names.users[i.user] ?? i.user;
  if (i.kind === 'slash_command') return `${who}: ${i.command ?? '/maas'} ${i.text ?? ''}`.trimEnd();
  return `${who} clicked "${i.actionId}"`;
}

/** The channel as text: who typed what, what the bot answered, the buttons. */
export function renderTranscript(records: { invocations: Invocation[]; messages: EmulatedMessage[] }, names: TranscriptNames, fromSeq = 0): string {
  const items: { seq: number; lines: string[] }[] = [
    ...records.invocations.filter((i) => i.seq >= fromSeq).map((i) => ({ seq: i.seq, lines: ['', invocationLine(i, names)] })),
    ...records.messages.filter((m) => m.seq >= fromSeq && !m.deleted).map((m) => ({ seq: m.seq, lines: messageLines(m, names, fromSeq) })),
    ...records.messages.flatMap((m) =>
      m.updates.filter((u) => u.seq >= fromSeq).map((u) => ({ seq: u.seq, lines: updateLines(m, u, names) })),
    ),
  ];
  return items
    .sort((a, b) => a.seq - b.seq)
    .flatMap((i) => i.lines)
    .join('\n');
}
