/**
 * How long the lab's Slack messages are: for every message the lab posts in a channel (not in a
 * thread) and every edit of one, the main message's length in lines and characters as a reader
 * sees it (lab/transcript.ts blocksText: date tokens read as their fallback, buttons as one line),
 * and how many thread replies and files the step added.
 *
 *   node --import tsx bench/message-lengths.ts --json after.json
 *   node --import tsx bench/message-lengths.ts --json after.json --before before.json --doc docs/message-lengths.md
 *
 * `--after FILE` reads a measurement saved by `--json` instead of running the lab again.
 * `--before` is the same script's JSON from an earlier commit; with `--doc` the two go side by side
 * in a table, matched by step and by the message's identity in the step: where it is and whether it
 * was posted or edited, then the subject its first line names (a `before` row saved without one is
 * matched by where, in order), so messages that arrive in another order keep their own rows.
 * Env: REDIS_URL (default redis://127.0.0.1:6379; loopback only, as the lab).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { runLab } from '../lab/run-lab.ts';
import type { LabStep } from '../lab/lab-script.ts';
import { LAB_CHANNELS } from '../lab/lab-world.ts';
import type { SlackEmulator } from '../lab/slack-emulator/index.ts';
import { blocksText } from '../lab/transcript.ts';

export interface MessageLength {
  /** `3:1`: the step's number and the message's place among the step's top-level messages. */
  key: string;
  step: string;
  what: string;
  /** The first line up to its first colon or dash, numbers as `#`: which message this is, not its figures. */
  subject?: string;
  lines: number;
  chars: number;
  /** Thread replies and files the step posted. */
  threadPosts: number;
}

function stepLabel(step: LabStep): string {
  if (step.kind === 'command') return `/maas ${step.text}`;
  if (step.kind === 'click') return `${step.user} clicks ${step.button}`;
  if (step.kind === 'alertmanager') return `(Alertmanager) ${step.webhook.alerts.map((a) => a.labels.alertname).join(', ')} ${step.webhook.status}`;
  return `(nobody typed) ${step.measured}`;
}

const CHANNEL_NAME: Record<string, string> = { [LAB_CHANNELS.ops]: '#ops', [LAB_CHANNELS.alerts]: '#alerts' };

function measure(content: { text: string; blocks?: unknown[] }): { lines: number; chars: number; subject: string } {
  const lines = content.blocks?.length ? blocksText(content.blocks) : content.text.split('\n');
  return { lines: lines.length, chars: lines.join('\n').length, subject: subjectOf(lines[0] ?? '') };
}

function subjectOf(firstLine: string): string {
  return firstLine.replace(/:[a-z0-9_+-]+:/g, '').replace(/<@\w+>/g, 'someone').split(/: | — /)[0]!.replace(/\d+/g, '#').slice(0, 80).trim();
}

function stepRows(step: LabStep, index: number, emulator: SlackEmulator, fromSeq: number, toSeq: number): MessageLength[] {
  const within = (seq: number) => seq >= fromSeq && seq < toSeq;
  const states: { seq: number; what: string; content: { text: string; blocks?: unknown[] } }[] = [];
  let threadPosts = 0;
  for (const m of emulator.messages) {
    if (m.threadTs) {
      if (within(m.seq)) threadPosts += 1 + (m.files?.length ?? 0);
      continue;
    }
    const where = `${CHANNEL_NAME[m.channel] ?? m.channel}${m.ephemeral ? ', ephemeral' : ''}`;
    if (within(m.seq)) states.push({ seq: m.seq, what: `posted in ${where}`, content: m.original });
    for (const u of m.updates) if (within(u.seq)) states.push({ seq: u.seq, what: `${u.via === 'response_url' ? 'replaced' : 'edited'} in ${where}`, content: u });
  }
  const measured = states.sort((a, b) => a.seq - b.seq).map((s) => ({ ...s, ...measure(s.content) }));
  return measured.map((s, i) => ({ key: `${index + 1}:${i + 1}`, step: stepLabel(step), what: s.what, subject: s.subject, lines: s.lines, chars: s.chars, threadPosts: i === 0 ? threadPosts : 0 }));
}


async function collect(): Promise<MessageLength[]> {
  const rows: MessageLength[] = [];
  let previous: { step: LabStep; index: number; fromSeq: number } | undefined;
  const flush = (emulator: SlackEmulator, toSeq: number) => {
    if (previous) rows.push(...stepRows(previous.step, previous.index, emulator, previous.fromSeq, toSeq));
  };
  let last: SlackEmulator | undefined;
  const code = await runLab({ env: process.env, out: () => undefined, err: (s) => process.stderr.write(`${s}\n`) }, (step, index, emulator, fromSeq) => {
    flush(emulator, fromSeq);
    previous = { step, index, fromSeq };
    last = emulator;
  });
  if (code !== 0) throw new Error(`the lab failed (exit ${code})`);
  if (last) flush(last, Number.POSITIVE_INFINITY);
  return rows;
}

/**
 * Rows grouped by the step's text and its occurrence in the script: a script that gained steps
 * since the `before` run still lines up.
 */
function byStep(rows: readonly MessageLength[]): Map<string, MessageLength[]> {
  const seen = new Map<string, number>();
  const stepOf = new Map<string, number>();
  const out = new Map<string, MessageLength[]>();
  for (const r of rows) {
    const index = r.key.split(':')[0];
    if (!stepOf.has(`${r.step}@${index}`)) {
      const n = (seen.get(r.step) ?? 0) + 1;
      seen.set(r.step, n);
      stepOf.set(`${r.step}@${index}`, n);
    }
    const group = `${r.step}#${stepOf.get(`${r.step}@${index}`)}`;
    out.set(group, [...(out.get(group) ?? []), r]);
  }
  return out;
}

type Pair = { a?: MessageLength; b?: MessageLength };

/** `edited in #ops` and `replaced in #ops` are both a change of a message already there. */
function placeAndKind(what: string): string {
  return what.replace(/^(edited|replaced) in /, 'changed in ');
}

/**
 * One step's rows paired: the same place, kind and subject first; a row saved without a subject
 * (an older `before`) by the same place and kind (posted or changed), in the order they came.
 */
function pairStep(after: readonly MessageLength[], before: readonly MessageLength[]): Pair[] {
  const left = [...before];
  const take = (match: (b: MessageLength) => boolean) => {
    const i = left.findIndex(match);
    return i < 0 ? undefined : left.splice(i, 1)[0];
  };
  const pairs: Pair[] = after.map((a) => ({ a }));
  for (const p of pairs) p.b = take((b) => b.subject !== undefined && b.what === p.a!.what && b.subject === p.a!.subject);
  for (const p of pairs) p.b ??= take((b) => b.subject === undefined && placeAndKind(b.what) === placeAndKind(p.a!.what));
  return [...pairs, ...left.map((b) => ({ b }))];
}

function table(after: readonly MessageLength[], before: readonly MessageLength[]): string {
  const old = byStep(before);
  const now = byStep(after);
  const head = ['| # | step | message | before: lines | before: chars | after: lines | after: chars | after: thread posts |', '|---|---|---|---:|---:|---:|---:|---:|'];
  const firstKey = (g: string) => (now.get(g) ?? old.get(g))![0]!.key;
  const groups = [...new Set([...now.keys(), ...old.keys()])].sort((x, y) => byKey(firstKey(x), firstKey(y)));
  const pairs = groups.flatMap((g) => pairStep(now.get(g) ?? [], old.get(g) ?? []));
  const rows = pairs.map(({ a, b }) => {
    const cell = (n: number | undefined) => (n === undefined ? '—' : String(n));
    const r = a ?? b!;
    return `| ${a ? a.key : `(${b!.key})`} | \`${r.step}\` | ${r.what}${r.subject ? `: ${cellText(r.subject)}` : ''} | ${cell(b?.lines)} | ${cell(b?.chars)} | ${cell(a?.lines)} | ${cell(a?.chars)} | ${cell(a?.threadPosts)} |`;
  });
  const sum = (rs: readonly MessageLength[], f: (r: MessageLength) => number) => rs.reduce((n, r) => n + f(r), 0);
  const max = (rs: readonly MessageLength[], f: (r: MessageLength) => number) => rs.reduce((n, r) => Math.max(n, f(r)), 0);
  const total = `| | **all** | total (longest) | ${sum(before, (r) => r.lines)} (${max(before, (r) => r.lines)}) | ${sum(before, (r) => r.chars)} (${max(before, (r) => r.chars)}) | ${sum(after, (r) => r.lines)} (${max(after, (r) => r.lines)}) | ${sum(after, (r) => r.chars)} (${max(after, (r) => r.chars)}) | ${sum(after, (r) => r.threadPosts)} |`;
  return [...head, ...rows, total].join('\n');
}

/** A subject as table-cell text: no emphasis marks, no column breaks. */
function cellText(s: string): string {
  return s.replace(/\*/g, '').replace(/\|/g, '\\|');
}

function byKey(a: string, b: string): number {
  const [sa, ia] = a.split(':').map(Number);
  const [sb, ib] = b.split(':').map(Number);
  return sa! - sb! || ia! - ib!;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const saved = arg('--after');
  const rows = saved ? (JSON.parse(readFileSync(saved, 'utf8')) as MessageLength[]) : await collect();
  const json = arg('--json');
  if (json) writeFileSync(json, JSON.stringify(rows, null, 2) + '\n');
  const beforePath = arg('--before');
  const doc = arg('--doc');
  if (beforePath && doc) {
    const before = JSON.parse(readFileSync(beforePath, 'utf8')) as MessageLength[];
    const text = readFileSync(doc, 'utf8');
    const marker = '<!-- message-lengths table -->';
    const [intro] = text.split(marker);
    writeFileSync(doc, `${intro}${marker}\n${table(rows, before)}\n`);
  }
  for (const r of rows) process.stdout.write(`${r.key}\t${r.lines}\t${r.chars}\t${r.threadPosts}\t${r.step} (${r.what})\n`);
}

await main();
