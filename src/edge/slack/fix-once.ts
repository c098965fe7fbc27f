import type { Finding } from '../../core/report.ts';

/** The fix a finding says, and how many findings after it share that fix and so say none. */
export interface FixToSay {
  fix: string;
  sharedBelow: number;
}

/**
 * Each fix once: nine drifted machines fixed by the same `/maas fix-macs site-b` show it under the
 * first, counting the eight after it, and no *Fix* line under those eight. A fix another already
 * says in its own words (`upgrade the controller…` inside `/maas fix-dns prod puts…; upgrade the
 * controller…`) is said there too. Per finding, in the order given: what to say, or undefined (no
 * fix, or one already said above).
 */
export function fixesOnce(findings: readonly Finding[]): (FixToSay | undefined)[] {
  const said: string[] = [];
  return findings.map((f, i) => {
    if (!f.fix || said.some((s) => fixSays(s, f.fix!))) return undefined;
    said.push(f.fix);
    const sharedBelow = findings.slice(i + 1).filter((g) => g.fix && fixSays(f.fix!, g.fix)).length;
    return { fix: f.fix, sharedBelow };
  });
}

/** A fix as words: no code marks, one space between words, any case. */
export function fixWords(fix: string): string {
  return fix.replace(/`/g, '').replace(/\s+/g, ' ').trim();
}

/** Whether `fix` already says `other` (the same words, or them within its own). */
export function fixSays(fix: string, other: string): boolean {
  return fixWords(fix).toLowerCase().includes(fixWords(other).toLowerCase());
}

/** "also for the 8 findings below", or nothing when the fix is this finding's alone. */
export function sharedNote(say: FixToSay): string {
  return say.sharedBelow ? `also for the ${say.sharedBelow} finding${say.sharedBelow === 1 ? '' : 's'} below` : '';
}
