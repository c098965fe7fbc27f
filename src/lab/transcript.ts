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
}

function messageLines(m: EmulatedMessage, names: TranscriptNames): string[] {
  const who = m.ephemeral ? `${names.bot} (only visible to ${names.users[m.user ?? ''] ?? m.user})` : names.bot;
  const body = m.blocks?.length ? blocksText(m.blocks, names.users) : unescape(m.text, names.users).split('\n');
  const edited = m.updates.length ? ' (edited)' : '';
  const prefix = m.threadTs ? '    ↳ ' : '';
  const pad = m.threadTs ? '      ' : '  ';
  return [`${prefix}${who}${edited}:`, ...body.map((l) => `${pad}${l}`)];
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
    ...records.messages.filter((m) => m.seq >= fromSeq && !m.deleted).map((m) => ({ seq: m.seq, lines: messageLines(m, names) })),
  ];
  return items
    .sort((a, b) => a.seq - b.seq)
    .flatMap((i) => i.lines)
    .join('\n');
}
