import ssh2 from 'ssh2';
import { fingerprintOfPublicKeyLine } from '../../src/adapters/ssh/fingerprint.ts';

const { utils } = ssh2;

export interface KeyPair {
  /** OpenSSH private key text. */
  privateKey: string;
  /** OpenSSH public key line: `ssh-ed25519 AAAA... comment`. */
  publicKey: string;
  /** `SHA256:...`, as `ssh-keygen -lf` prints it. */
  fingerprint: string;
}

/**
 * A fresh ed25519 key pair (for a client, or a simulated host). ssh2's generateKeyPairSync
 * sometimes drops a leading zero byte of the public key (about 1 in 200): draw again.
 */
export function generateKeyPair(comment = 'maas-chatops-test'): KeyPair {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = utils.generateKeyPairSync('ed25519', { comment });
    const fingerprint = fingerprintOfPublicKeyLine(pair.public);
    const parsed = utils.parseKey(pair.public);
    if (fingerprint && !(parsed instanceof Error) && !Array.isArray(parsed)) {
      return { privateKey: pair.private, publicKey: pair.public, fingerprint };
    }
  }
  throw new Error('ssh2 kept generating public keys that do not parse');
}

/** An OpenSSH known_hosts line pinning publicKey for host:port. */
export function knownHostsLine(host: string, port: number, publicKey: string): string {
  const [type, key] = publicKey.trim().split(/\s+/);
  return `${port === 22 ? host : `[${host}]:${port}`} ${type} ${key}`;
}
