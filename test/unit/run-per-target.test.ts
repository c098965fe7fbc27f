import { describe, expect, it } from 'vitest';
import { DEFAULT_TARGET_CONCURRENCY, runPerTarget } from '../../src/core/targets.ts';
import { finishReport, type Report } from '../../src/core/report.ts';

/** A check that records how many targets are in flight at once and answers in an order of its own. */
function trackedCheck() {
  const seen = { inFlight: 0, peak: 0, started: [] as string[] };
  const check = async (target: { name: string }): Promise<Report> => {
    seen.inFlight += 1;
    seen.peak = Math.max(seen.peak, seen.inFlight);
    seen.started.push(target.name);
    await new Promise((resolve) => setTimeout(resolve, target.name.length % 3));
    seen.inFlight -= 1;
    if (target.name === 'site-3') throw new Error('MAAS is down');
    return finishReport({ kind: 'mac-diff', target: target.name, verdict: 'ok', findings: [] }, new Date());
  };
  return { seen, check };
}

const sites = (n: number) => Array.from({ length: n }, (_v, i) => ({ name: `site-${i}` }));

describe('runPerTarget: the targets of an `all`, a bounded number at a time', () => {
  it('never has more than the given number in flight, and keeps the targets\' order in its reports', async () => {
    const { seen, check } = trackedCheck();
    const reports = await runPerTarget('mac-diff', sites(10), check, 3);
    expect(seen.peak).toBe(3);
    expect(seen.started).toHaveLength(10);
    expect(reports.map((r) => r.target)).toEqual(sites(10).map((s) => s.name));
    expect(reports[3]!.findings[0]).toMatchObject({ code: 'PROBE_FAILED' });
  });

  it(`runs ${DEFAULT_TARGET_CONCURRENCY} at a time by default`, async () => {
    const { seen, check } = trackedCheck();
    await runPerTarget('mac-diff', sites(12), check);
    expect(seen.peak).toBe(DEFAULT_TARGET_CONCURRENCY);
  });
});
