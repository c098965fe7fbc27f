import { createHash } from 'node:crypto';

/** A host key fingerprint as `ssh-keygen -lf` prints it: `SHA256:` then unpadded base64. */
export function sha256Fingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH wire-format public key blob (`ssh-ed25519`, ...). */
export function keyTypeOf(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return 'unknown';
  const length = keyBlob.readUInt32BE(0);
  if (length === 0 || length > 64 || keyBlob.length < 4 + length) return 'unknown';
  return keyBlob.subarray(4, 4 + length).toString('latin1');
}

/** Fingerprint of an OpenSSH public key line (`ssh-ed25519 AAAA... comment`). */
export function fingerprintOfPublicKeyLine(line: string): string | null {
  const [type, base64] = line.trim().split(/\s+/);
  if (!type || !base64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  const blob = Buffer.from(base64, 'base64');
  return keyTypeOf(blob) === type ? sha256Fingerprint(blob) : null;
}
