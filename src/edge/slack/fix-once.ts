import type { Finding } from '../../core/report.ts';

/** The fix a finding says, and how many findings after it share that fix and so say none. */
export interface FixToSay {
  fix: string;
  sharedBelow: number;
}

/**
 * Each fix once: nine drifted machines fixed by the same `/maas fix-macs site-b` show it under the
 * first, counting the eight after it, and no *Fix* line under those eight. Per finding, in the
 * order given: what to say, or undefined (no fix, or one already said above).
 */
export function fixesOnce(findings: readonly Finding[]): (FixToSay | undefined)[] {
  const said = new Set<string>();
  return findings.map((f, i) => {
    if (!f.fix || said.has(f.fix)) return undefined;
    said.add(f.fix);
    const sharedBelow = findings.slice(i + 1).filter((g) => g.fix === f.fix).length;
    return { fix: f.fix, sharedBelow };
  });
}

/** "also for the 8 findings below", or nothing when the fix is this finding's alone. */
export function sharedNote(say: FixToSay): string {
  return say.sharedBelow ? `also for the ${say.sharedBelow} finding${say.sharedBelow === 1 ? '' : 's'} below` : '';
}
