import { createHmac, timingSafeEqual } from 'node:crypto';
import { fingerprintOfPublicKeyLine } from './fingerprint.ts';

/**
 * The fingerprints an OpenSSH known_hosts text pins for host:port. Follows OpenSSH's matching:
 * a non-22 port is written `[host]:port`; patterns may use `*`, `?` and `!negation`; hashed
 * `|1|salt|hash` entries are matched by HMAC-SHA1; `@revoked` keys are never pinned;
 * `@cert-authority` lines are skipped (no certificate support).
 */
export function knownHostsPins(text: string, host: string, port: number): string[] {
  const name = port === 22 ? host : `[${host}]:${port}`;
  const pinned = new Set<string>();
  const revoked = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const entry = parseLine(line);
    if (!entry || entry.marker === '@cert-authority' || !hostsMatch(entry.hosts, name)) continue;
    const fingerprint = fingerprintOfPublicKeyLine(`${entry.keyType} ${entry.key}`);
    if (!fingerprint) continue;
    (entry.marker === '@revoked' ? revoked : pinned).add(fingerprint);
  }
  return [...pinned].filter((f) => !revoked.has(f));
}

interface KnownHostsEntry {
  marker?: string;
  hosts: string;
  keyType: string;
  key: string;
}

function parseLine(line: string): KnownHostsEntry | null {
  const fields = line.trim().split(/\s+/);
  if (!fields[0] || fields[0].startsWith('#')) return null;
  const marker = fields[0].startsWith('@') ? fields.shift() : undefined;
  const [hosts, keyType, key] = fields;
  if (!hosts || !keyType || !key) return null;
  return marker ? { marker, hosts, keyType, key } : { hosts, keyType, key };
}

function hostsMatch(hosts: string, name: string): boolean {
  if (hosts.startsWith('|1|')) return hashedMatch(hosts, name);
  let matched = false;
  for (const pattern of hosts.split(',')) {
    const negated = pattern.startsWith('!');
    if (!globMatch(negated ? pattern.slice(1) : pattern, name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

function hashedMatch(entry: string, name: string): boolean {
  const [, , salt, hash] = entry.split('|');
  if (!salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

function globMatch(pattern: string, name: string): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 'i').test(name);
}
