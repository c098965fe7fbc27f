import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLab, type LabRedis } from '../../lab/run-lab.ts';
import { LAB_CHANNELS } from '../../lab/lab-world.ts';
import type { SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import type { Finding, Report } from '../../src/core/report.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { TEST_REDIS_URL } from '../helpers/redis.ts';

/*
 * Issue 31: the channel answer is short, and nothing of the long form is lost. For three of the
 * lab's answers, every fact of the report the worker posted (read back from its BullMQ job, not
 * written here) is somewhere a reader finds it: the main message, its thread, or a file there.
 * A finding's facts must be in that finding's own part of the thread (the lines under its
 * `CODE` heading), so a finding whose evidence is dropped is not rescued by a summary table
 * that repeats its MACs.
 */

const ANSWERS = ['dns-check prod', 'resolver-check site-b', 'mac-diff site-b'];
/** The lab steps up to the last of ANSWERS (mac-diff site-b is the seventh). */
const STEPS = 7;

interface Seen {
  report: Report;
  /** The main message as a reader sees it, after its last edit. */
  main: string;
  /** Each thread reply, then each file shared in the thread. */
  thread: string[];
}

const seen = new Map<string, Seen>();
let labExit = -1;

/** The report the worker returned for `kind target` (what it posted), from the completed job. */
async function postedReport(redis: LabRedis, kind: string, target: string): Promise<Report> {
  const connection = new Redis(redis.url);
  const queue = new Queue(queueNameFor(kind), { connection, prefix: redis.prefix });
  try {
    const jobs = (await queue.getJobs(['completed'])).filter((j) => j.data.target === target);
    const newest = jobs.sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))[0];
    const reports = newest?.returnvalue as Report[] | undefined;
    if (reports?.length !== 1) throw new Error(`no completed ${kind} ${target} job with one report`);
    return reports[0]!;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

const textOf = (content: { text: string; blocks?: unknown[] }) => (content.blocks?.length ? blocksText(content.blocks).join('\n') : content.text);

/** The step's answer in #ops, its thread replies and the files shared there. */
function answerOf(emulator: SlackEmulator, fromSeq: number): Omit<Seen, 'report'> {
  const answer = emulator.resultsIn(LAB_CHANNELS.ops).filter((m) => m.seq >= fromSeq).at(-1);
  if (!answer) throw new Error('no answer in #ops');
  const replies = emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.threadTs === answer.ts);
  const files = emulator.files.filter((f) => f.threadTs === answer.ts).map((f) => f.content ?? '');
  return { main: textOf(answer), thread: [...replies.map(textOf), ...files] };
}

const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;
const MAC = /\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b/gi;
/** A file a finding cites: a source file (`maasserver/dhcp.py`) or the config line it read (`/…/site-b-dhcpd.conf:17`). */
const CITED_FILE = /(?:\/|\b)(?:[\w.-]+\/)+[\w.-]+\.(?:py|go|conf)(?::\d+)?\b/g;
/** Evidence keys whose value names a machine, a domain or a record. */
const NAME_KEY = /^(hostname|name|domain|systemId|fqdn)$/;

/** Every string in the evidence, with the key it sits under. */
function evidenceStrings(value: unknown, key = ''): { key: string; text: string }[] {
  if (typeof value === 'string') return [{ key, text: value }];
  if (Array.isArray(value)) return value.flatMap((v) => evidenceStrings(v, key));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => evidenceStrings(v, k));
  return [];
}

/** What a reader must be able to find of one finding: its code, subject, names, system ids, IPs, MACs and cited files. */
function factsOf(finding: Finding): string[] {
  const strings = evidenceStrings(finding.evidence);
  const found = strings.flatMap(({ key, text }) => [...(NAME_KEY.test(key) ? [text] : []), ...(text.match(IPV4) ?? []), ...(text.match(MAC) ?? []), ...(text.match(CITED_FILE) ?? [])]);
  return [...new Set([finding.code, finding.subject, ...found])];
}

/** A finding's heading in the thread: `:icon: \`CODE\` *severity* — subject`. */
const HEADING = /^:\w+: `([A-Z][A-Z0-9_]+)` \*(?:info|warning|critical|error)\* — /;

/** The thread cut at each finding heading: the code and the lines under it. */
function sectionsOf(thread: readonly string[]): { code: string; text: string }[] {
  const sections: { code: string; text: string }[] = [];
  for (const line of thread.flatMap((t) => t.split('\n'))) {
    const code = HEADING.exec(line)?.[1];
    if (code) sections.push({ code, text: line });
    else if (sections.length) sections.at(-1)!.text += `\n${line}`;
  }
  return sections;
}

/** The facts of `finding` that no part of the thread under its own code holds all together: the first such part's gaps. */
function missingFacts(finding: Finding, sections: readonly { code: string; text: string }[]): string[] {
  const facts = factsOf(finding);
  const gaps = sections.filter((s) => s.code === finding.code).map((s) => facts.filter((f) => !s.text.includes(f)));
  return gaps.find((g) => g.length === 0) ?? gaps.sort((a, b) => a.length - b.length)[0] ?? facts;
}

describe('the short answers of the lab lose nothing of the long form', () => {
  beforeAll(async () => {
    labExit = await runLab({ env: { REDIS_URL: TEST_REDIS_URL }, out: () => undefined, err: () => undefined, stepLimit: STEPS }, async (step, _i, emulator, fromSeq, redis) => {
      if (step.kind !== 'command' || !ANSWERS.includes(step.text)) return;
      const [kind, target] = step.text.split(' ') as [string, string];
      seen.set(step.text, { report: await postedReport(redis, kind, target), ...answerOf(emulator, fromSeq) });
    });
  }, 120_000);

  it('the lab ran and each of the three answers was seen with the report behind it', () => {
    expect(labExit).toBe(0);
    expect([...seen.keys()].sort()).toEqual([...ANSWERS].sort());
    // Reports with findings to lose: the lab's incidents, not healthy answers.
    for (const { report } of seen.values()) expect(report.findings.length).toBeGreaterThanOrEqual(2);
  });

  it.each(ANSWERS)('%s: each finding has its own part of the thread, holding its code, subject, names, system ids, IPs, MACs and cited files', (answer) => {
    const { report, thread } = seen.get(answer)!;
    const sections = sectionsOf(thread);
    for (const finding of report.findings) expect(missingFacts(finding, sections), `${finding.code} ${finding.subject}`).toEqual([]);
    // One part per finding: two findings on one machine (site-b-node3's eth0 and eth1) are two parts.
    expect(sections.map((s) => s.code).sort()).toEqual(report.findings.map((f) => f.code).sort());
  });

  it.each(ANSWERS)('%s: the main message names every finding code, and the verdict is whole in the message or its thread', (answer) => {
    const { report, main, thread } = seen.get(answer)!;
    for (const code of new Set(report.findings.filter((f) => f.severity !== 'info').map((f) => f.code))) expect(main).toContain(`\`${code}\``);
    expect([main, ...thread].some((t) => t.includes(report.verdict))).toBe(true);
  });
});
