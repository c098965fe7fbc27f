import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { main } from '../../src/cli.ts';

/*
 * ISO 8601 in JSON (issue 31): the rack's dhcpd.conf mtime and dhcpd's start come back as Unix
 * seconds (`stat -c %Y`, `date +%s`); `--json` keeps the numbers (the report's contract) and puts
 * each one's ISO 8601 twin beside it. Real parts: the lab's MAAS simulator and rack over SSH.
 */
describe('maas-chatops resolver-check --json', () => {
  let world: LabWorld;
  beforeAll(async () => {
    world = await startLabWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  it("the rack's dhcpd.conf mtime keeps its Unix seconds (writtenAt) and gains writtenAtIso, the same instant in ISO 8601 UTC", async () => {
    const out: string[] = [];
    await main(['resolver-check', 'site-b', '--json', '--config', world.configPath], { out: (s) => out.push(s), err: () => undefined }, { ...world.env, PATH: process.env.PATH });
    const report = JSON.parse(out.join('\n')) as { findings: { evidence: { serving?: Record<string, unknown> } }[] };
    const servings = report.findings.flatMap((f) => (f.evidence.serving ? [f.evidence.serving] : []));
    expect(servings.length).toBeGreaterThan(0);
    for (const serving of servings) {
      expect(typeof serving.writtenAt).toBe('number');
      expect(serving.writtenAtIso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      expect(Date.parse(serving.writtenAtIso as string)).toBe((serving.writtenAt as number) * 1000);
    }
  });
});
