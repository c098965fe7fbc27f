import { beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { runLab, type LabRedis } from '../../lab/run-lab.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { SCAN_JOB } from '../../src/features/registry.ts';
import { LAB_CHANNELS } from '../../lab/lab-world.ts';
import type { SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import { ANSWER_LIMITS } from '../../src/edge/slack/answer-render.ts';
import { TEST_REDIS_URL } from '../helpers/redis.ts';

/** A dns-check scan of prod the queue ran during the wipe step. */
interface WipeScan {
  id: string;
  trigger: string[] | null;
}

interface LabRun {
  code: number;
  out: string[];
  err: string[];
  emulator?: SlackEmulator;
  /** Every dns-check scan of prod processed while the wipe step ran (nobody typing). */
  wipeScans?: WipeScan[];
}

const run: LabRun = { code: -1, out: [], err: [] };
const WIPE_STEP = "prod's wipe alerted";

/** The scan jobs of dns-check prod processed since `since`: what alerted, and why it ran. */
async function prodScansSince(redis: LabRedis, since: number): Promise<WipeScan[]> {
  const connection = new Redis(redis.url);
  const queue = new Queue(queueNameFor(SCAN_JOB), { connection, prefix: redis.prefix });
  try {
    const jobs = await queue.getJobs(['completed', 'failed', 'active']);
    return jobs
      .filter((j) => j.data.check === 'dns-check' && j.data.target === 'prod' && (j.processedOn ?? 0) >= since)
      .map((j) => ({ id: String(j.id), trigger: Array.isArray(j.data.trigger) ? (j.data.trigger as string[]) : null }));
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

const linesOf = (content: { text: string; blocks?: unknown[] }) => (content.blocks?.length ? blocksText(content.blocks) : content.text.split('\n'));
const CHECK_ANSWER = /^:\w+: \*(OK|WARNING|CRITICAL|ERROR)\* · (dns-check|resolver-check|mac-diff|dhcp-check) \S+: /;
const FINDING_HEAD = /^:\w+: `[A-Z0-9_]+` \*(info|warning|critical|error)\* — /;

describe('npm run lab', () => {
  beforeAll(async () => {
    let stepStartedAt = Date.now();
    run.code = await runLab({ env: { REDIS_URL: TEST_REDIS_URL }, out: (s) => run.out.push(s), err: (s) => run.err.push(s) }, async (step, _i, emulator, _seq, redis) => {
      run.emulator = emulator;
      if (step.kind === 'world' && step.measured === WIPE_STEP) run.wipeScans = await prodScansSince(redis, stepStartedAt);
      stepStartedAt = Date.now();
    });
  }, 300_000);

  it('prints the scripted conversation with every command answered', () => {
    const { out, err, code } = run;
    const channel = out.join('\n');
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(channel).toContain('alice (on call): /maas help');
    expect(channel).toMatch(/maas-bot \(only visible to alice \(on call\)\):\n {2}Usage: \/maas <command>/);
    expect(channel).toContain('alice (on call): /maas sites');
    expect(channel).toMatch(/Clusters:\n\s+prod/);
    expect(channel).toContain('API record WIPED, empty-set hash cached');
    expect(channel).toContain('answers SERVFAIL for its own zone maas-internal');
    expect(channel).toContain('9 of 12 machines at site-b have drifted MACs');
    // site-b's Failed commissioning machine is commissioned again, followed in the thread, and ends Ready.
    expect(channel).toContain('site-b-node1: commissioning started (Broken → Commissioning); following it until Ready or failed');
    expect(channel).toMatch(/site-b-node1: ✅ mark-broken verified .* → ✅ set-mac verified .* → ✅ commission verified \(Broken → Commissioning → Ready in \d+s \(read back\): MAAS commissioned it\)/);
    // One `all` answer: a summary naming every site, the failing one's details in its thread.
    expect(channel).toMatch(/CRITICAL · resolver-check all · 3 targets\n.*1 of 3 targets need attention.*\n.*\*site-b\* CRITICAL · `RESOLVER_SERVFAIL`.*\n.*healthy \(2\): site-a, site-c/);
    expect(channel).toMatch(/ {4}↳ maas-bot:\n {6}:red_circle: \*CRITICAL\* · resolver-check site-b: /);
    // 300 drifted machines: the message counts the rows, the thread holds them whole.
    expect(channel).toContain('300 of 300 machines at site-c have drifted MACs');
    expect(channel).toContain('table: the whole of it (300 rows) is in the file `site-c-table.txt` in this thread');
    expect(channel).toContain('The evidence of all 302 findings, whole, is in the file `site-c-evidence.txt` in this thread.');
    expect(channel).toContain('[file site-c-table.txt: 301 lines]');
    expect(channel).toContain('[file site-c-snippet.tf: 303 lines]');
    // Finished repairs read as finished: results and the re-check, not the findings they repaired.
    expect(channel).toMatch(/:white_check_mark: \*OK\* · fix-macs site-b: Done: 12 of 12 steps verified\n {2}\*12 of 12 steps verified\* on 9 machines/);
    expect(channel).toContain('Re-checked after the run: All 12 machines at site-b match their live MACs.');
    // MAAS's witnesses of the drift, the client view of the wiped record, the canary after fix-resolver.
    expect(channel).toMatch(/rack site-b-rack saw 52:54:00:[0-9a-f:]+ on br-pxe as an unknown neighbour, last .* UTC \(\d+m ago\); no PXE event since .* UTC \(3d 0h ago\)/);
    expect(channel).toMatch(/MAAS record empty, DNS still serving cached\/old answers \(TTL left: \d+ s\)/);
    expect(channel).toContain('Canary site-b-node10: commissioning started (sb0010)');
    // Nobody types: the watch sees prod's hash annotation turn into the empty-set hash and alerts within seconds.
    expect(channel).toMatch(/⏱ prod's wipe alerted \d+\.\d s after it happened \(no command typed\)/);
    const afterWipe = channel.slice(channel.indexOf("The wipe again, with nobody typing"));
    expect(afterWipe).toMatch(/dns-check prod[\s\S]*API record WIPED, empty-set hash cached/);
    // Nobody types: site-a's VM host watch sees an OpenTofu replace (Undefined, then Defined) and mac-diff alerts.
    expect(channel).toMatch(/⏱ site-a's replaced VM alerted \d+\.\d s after it happened \(no command typed\)/);
    expect(channel.slice(channel.indexOf("The regenerated MACs again"))).toMatch(/1 of 5 machines at site-a has drifted MACs/);
    // What the scan after the MAC repair says it does is what it does: the MAC alert resolves, the resolver alert stays open.
    const afterScan = channel.slice(channel.indexOf("──── The next scan marks site-b's MAC alert resolved"), channel.indexOf('──── The resolver repair'));
    expect(afterScan).toMatch(/:white_check_mark: RESOLVED · mac-diff site-b/);
    expect(afterScan).toMatch(/:red_circle: \*CRITICAL\* · resolver-check site-b: [^\n]*\n {2}Open for /);
    expect(afterScan).not.toMatch(/RESOLVED · resolver-check site-b/);
    expect(channel).toContain('canary site-b-node10: ✅ commission-canary verified (commissioned: Ready');
  });

  // Counted, not timed: the wipe's alert came from a scan the watch queued (its job id and the
  // reason it carries say so), and no scheduled or typed scan of prod ran meanwhile.
  it('alerts the wipe from the watch: every dns-check prod scan of that step was queued by the watch, for the empty-set hash', () => {
    expect(run.wipeScans?.length).toBeGreaterThanOrEqual(1);
    for (const scan of run.wipeScans ?? []) {
      expect(scan.id).toMatch(/^watch-/);
      expect(scan.trigger).toEqual(expect.arrayContaining([expect.stringMatching(/^last-applied-dns-hash became the empty-set hash/)]));
    }
  });

  it("answers Alertmanager's KubeAPIDown for prod with prod's dns-check verdict in #alerts, once, and says the resolve where it answered", () => {
    const emulator = run.emulator!;
    const channel = run.out.join('\n');
    expect(channel).toMatch(/Alertmanager: POST \/alertmanager \(webhook v4, firing: alertname=KubeAPIDown cluster=prod .*\) → 200 \{"checks":1,/);
    const alerts = emulator.channelMessages(LAB_CHANNELS.alerts);
    const answers = alerts.filter((m) => linesOf(m).some((l) => l.startsWith('*Alertmanager:* KubeAPIDown')));
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(linesOf(answer).join('\n')).toMatch(/answered with `dns-check prod`.*\n:red_circle: \*CRITICAL\* · dns-check prod: API record WIPED, empty-set hash cached/);
    expect(linesOf(answer).length).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
    // In the thread of the bot's own open alert for prod (the wipe's), or a post of its own: either way in #alerts, and printed as it happened.
    const place = answer.threadTs ?? answer.ts;
    if (answer.threadTs) {
      const parent = alerts.find((m) => m.ts === answer.threadTs);
      expect(linesOf(parent!.updates.at(-1) ?? parent!)[0]).toMatch(/dns-check prod: /);
      expect(channel).toContain("↪ answered in the thread of the bot's own open alert for that cluster");
    } else {
      expect(channel).toContain('↪ answered with a post of its own in #alerts');
    }
    const resolved = alerts.filter((m) => m.text.startsWith(':white_check_mark: Alertmanager resolved KubeAPIDown'));
    expect(resolved.map((m) => m.threadTs)).toEqual([place]);
  });

  it('holds every message in a channel, as posted and as edited (answers, plans, alerts), to the same limits', () => {
    const emulator = run.emulator!;
    const main = emulator.messages.filter((m) => !m.threadTs && !m.ephemeral);
    expect(main.length).toBeGreaterThan(20);
    for (const m of main) {
      for (const content of [m.original, ...m.updates]) {
        const lines = linesOf(content);
        expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
        expect(lines.join('\n').length, lines.join('\n')).toBeLessThanOrEqual(ANSWER_LIMITS.maxChars);
      }
    }
  });

  it('holds every check answer in the channel to its limits, with each finding whole in its thread', () => {
    const emulator = run.emulator!;
    const answers = emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => !m.threadTs && CHECK_ANSWER.test(linesOf(m)[0] ?? ''));
    // dns-check prod ×2, staging, resolver-check site-b ×2, site-a, mac-diff site-b ×2, site-a, site-c.
    expect(answers.length).toBeGreaterThanOrEqual(10);
    for (const answer of answers) {
      const lines = linesOf(answer);
      expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
      expect(lines.join('\n').length, lines.join('\n')).toBeLessThanOrEqual(ANSWER_LIMITS.maxChars);
      const footer = lines.at(-1) ?? '';
      const counted = footer.startsWith('no findings') ? 0 : Number(/^(\d+) findings? ·/.exec(footer)?.[1]);
      const notes = Number(/ · (\d+) notes? ·/.exec(footer)?.[1] ?? 0);
      const findings = counted + notes;
      const problems = lines.filter((l) => /^:(red_circle|warning|x): `/.test(l));
      const more = Number(/^…and (\d+) more: /.exec(lines.find((l) => l.startsWith('…and ')) ?? '')?.[1] ?? 0);
      // The count the footer gives is the count of findings the message lists (a healthy answer lists none).
      expect(problems.length + more, footer).toBe(counted);
      if (lines[0]!.includes('*OK*')) expect(lines, 'a healthy answer is two lines').toHaveLength(2);
      const thread = emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.threadTs === answer.ts);
      const threadLines = thread.flatMap((m) => linesOf(m));
      const evidenceFile = thread.flatMap((m) => m.files ?? []).find((f) => f.filename.endsWith('-evidence.txt'));
      if (findings === 0) expect(thread).toEqual([]);
      else if (evidenceFile) expect((evidenceFile.content ?? '').match(/^\[(info|warning|critical|error)\] /gm)).toHaveLength(findings);
      else expect(threadLines.filter((l) => FINDING_HEAD.test(l))).toHaveLength(findings);
      // Each problem line's code has its evidence in the thread.
      for (const line of problems) expect(threadLines.join('\n')).toContain(/`[A-Z0-9_]+`/.exec(line)![0]);
    }
  });

  it('starts a private redis-server when REDIS_URL does not answer', async () => {
    const out: string[] = [];
    // The script as far as mac-diff site-b (its 7th step): enough to show the private Redis carries the jobs.
    const code = await runLab({ env: { REDIS_URL: 'redis://127.0.0.1:1', PATH: process.env.PATH }, out: (s) => out.push(s), err: () => undefined, stepLimit: 7 });
    expect(code).toBe(0);
    expect(out[0]).toMatch(/Redis redis:\/\/127\.0\.0\.1:(?!1,)\d+/);
    expect(out.join('\n')).toContain('9 of 12 machines at site-b have drifted MACs');
  }, 90_000);

  it('says how to get Redis when none answers and none can be started', async () => {
    const err: string[] = [];
    const code = await runLab({ env: { REDIS_URL: 'redis://127.0.0.1:1', PATH: '/nonexistent' }, out: () => undefined, err: (s) => err.push(s) });
    expect(code).toBe(2);
    expect(err).toEqual(['The lab needs Redis: install it (apt-get install redis-server) or set REDIS_URL to a running one.']);
  });
});
