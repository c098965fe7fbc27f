import { createHash, timingSafeEqual } from 'node:crypto';

/** A secret compared in constant time: digests of equal length, no early exit on length or content. */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
