import { createHash } from 'node:crypto';

/**
 * The controller's StableHashStringSlice (pkg/util/utils.go): drop empty strings, sort as
 * plain strings, SHA-256 over each value followed by one NUL byte, lowercase hex.
 * It does not remove duplicates: the fixed controller dedups before calling it.
 */
export function dnsHash(ips: readonly string[]): string {
  const sorted = ips.filter((ip) => ip !== '').sort(compareStrings);
  const hash = createHash('sha256');
  for (const ip of sorted) {
    hash.update(ip, 'utf8');
    hash.update(NUL);
  }
  return hash.digest('hex');
}

/** The hash of no IPs at all: the PCP-6608 forensic marker. */
export const EMPTY_SET_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const NUL = Buffer.from([0]);

/** Go's sort.Strings: byte order, not numeric and not locale-aware. */
export function compareStrings(a: string, b: string): number {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return Buffer.compare(x, y);
}
