import { createHash } from 'node:crypto';
import type { AlertKind } from './alert-record.ts';

function shortHash(parts: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 24);
}

/** The identity of one problem: (check, target, finding code, subject). */
export function fingerprintOf(check: string, target: string, code: string, subject: string): string {
  return shortHash([check, target, code, subject]);
}

/** The identity of one alert message: (check, target, kind of problem). */
export function alertIdOf(check: string, target: string, kind: AlertKind): string {
  return shortHash(['alert', check, target, kind]);
}

/**
 * Evidence that differs between two probes of an unchanged world: dig prints a fresh query id in
 * its status line every time; the witnesses' ages and a cached answer's TTL left grow or shrink
 * with the clock. Comparing them would note "evidence changed" on every scan.
 */
const VOLATILE_EVIDENCE = /, id: \d+|"age":"[^"]*"|"ttlLeft":\d+/g;

/** Evidence as canonical JSON (keys sorted at every level), hashed. */
export function evidenceDigest(evidence: unknown): string {
  return shortHash([canonicalJson(evidence).replace(VOLATILE_EVIDENCE, '')]);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
