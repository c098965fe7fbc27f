import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprintOfPublicKeyLine, keyTypeOf, sha256Fingerprint } from '../../../src/adapters/ssh/fingerprint.ts';
import { generateKeyPair } from '../../../lab/ssh-sim/keys.ts';
import { onPath } from '../../../lab/rack-sim/dig-on-path.ts';

// Vectors printed by OpenSSH's `ssh-keygen -lf` (OpenSSH 9.2, Debian 12).
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICDkB5K3l2IzWoHWFAumt38rsZ9+yl4x965SFOxL8u6e vec';
const ED25519_FP = 'SHA256:QJeh7U525gG0+cB9IAzgcrEH9pk3sGI3xNrbdaTqi0c';
const RSA =
  'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCUuhQXDzEnoqBf4Q787IcLRWziSDFkz8xkmNKnAWEjc5lNsY3nG6HjjPNG0dX33T+OQrxauEuDKH4aobyvR6OwjPoTWtA0aOYGaG0ZZHd6gFmlEIzqr00DF7TPCPH8dMmrRveK5oyO/ERPoGWRQmrb5kD+gw53Sg4mX/xC3dCAAPLSRPxaIeZ/CpDzcmlOT9pt0PUr5TUFJHGkqZg/rtBHXULr4bk0KB3ls8o558+yPVCPU3BVfU7n7XJJMNCffBCYMtwOjPmeoPIZF5xsqZxZDEXcwHVAxNvl/xPhvcxWD4frwVrtpQPsoGKq1YGTNhcANwStZ8u0cO+0Crw1ULu1 vec3';
const RSA_FP = 'SHA256:/6SP6tImXz3TxlKKvJMR+Qvhfvt/WcimfSCPxCkHLWI';

describe('SHA256 fingerprints', () => {
  it('match what ssh-keygen -lf printed for ed25519 and RSA keys', () => {
    expect(fingerprintOfPublicKeyLine(ED25519)).toBe(ED25519_FP);
    expect(fingerprintOfPublicKeyLine(RSA)).toBe(RSA_FP);
  });

  it('are unpadded base64 of 43 characters, the shape the config accepts', () => {
    expect(ED25519_FP).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(sha256Fingerprint(Buffer.from('x'))).not.toContain('=');
  });

  it('read the key type from the blob', () => {
    const blob = Buffer.from(ED25519.split(' ')[1] as string, 'base64');
    expect(keyTypeOf(blob)).toBe('ssh-ed25519');
    expect(keyTypeOf(Buffer.alloc(2))).toBe('unknown');
  });

  it('reject a line whose type does not match its blob, or that is not base64', () => {
    expect(fingerprintOfPublicKeyLine(ED25519.replace('ssh-ed25519', 'ssh-rsa'))).toBeNull();
    expect(fingerprintOfPublicKeyLine('ssh-ed25519 $(rm -rf)')).toBeNull();
    expect(fingerprintOfPublicKeyLine('')).toBeNull();
  });

  it.skipIf(!onPath('ssh-keygen'))('agree with the installed ssh-keygen on a fresh key (skipped without openssh-client)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fp-'));
    try {
      const pair = generateKeyPair();
      writeFileSync(join(dir, 'k.pub'), `${pair.publicKey}\n`);
      const printed = execFileSync('ssh-keygen', ['-lf', join(dir, 'k.pub')], { encoding: 'utf8' });
      expect(printed.split(' ')[1]).toBe(pair.fingerprint);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
