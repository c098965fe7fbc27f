import { describe, expect, it } from 'vitest';
import { knownHostsPins } from '../../../src/adapters/ssh/known-hosts.ts';

const KEY1 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICDkB5K3l2IzWoHWFAumt38rsZ9+yl4x965SFOxL8u6e';
const FP1 = 'SHA256:QJeh7U525gG0+cB9IAzgcrEH9pk3sGI3xNrbdaTqi0c';
const KEY2 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIARcYvamicvLAvusIkb1Eq3MAmx16LD+mMoMVtcnGpaF';
const FP2 = 'SHA256:vPy9w1s8C1HcZ478r7wdVpY310j7lmQ2NQNjq/zDfD0';

// `ssh-keygen -H` of "10.20.0.2 KEY1" and "[10.20.0.3]:2222 KEY2" (OpenSSH 9.2).
const HASHED = [
  `|1|r1v3zs4mNeWuMiNyWylALPtEqqc=|nlLSjcfZzwTPvwUSmAgFkA/fDU8= ${KEY1}`,
  `|1|4JjX9TSMQ6X//QTkYAgskqNZfDM=|f+W3OF0VT91FTNYkJ+MB7ZeY+uY= ${KEY2}`,
].join('\n');

describe('knownHostsPins', () => {
  it.each([
    ['a plain host on port 22', `10.20.0.2 ${KEY1}`, '10.20.0.2', 22, [FP1]],
    ['a host list', `rack-b,10.20.0.2 ${KEY1} comment`, '10.20.0.2', 22, [FP1]],
    ['[host]:port for another port', `[10.20.0.2]:2222 ${KEY1}`, '10.20.0.2', 2222, [FP1]],
    ['a plain entry does not pin another port', `10.20.0.2 ${KEY1}`, '10.20.0.2', 2222, []],
    ['a [host]:port entry does not pin port 22', `[10.20.0.2]:2222 ${KEY1}`, '10.20.0.2', 22, []],
    ['another host', `10.20.0.9 ${KEY1}`, '10.20.0.2', 22, []],
    ['a wildcard', `10.20.0.* ${KEY1}`, '10.20.0.2', 22, [FP1]],
    ['a ? wildcard', `10.20.0.? ${KEY1}`, '10.20.0.2', 22, [FP1]],
    ['a negated host', `10.20.0.*,!10.20.0.2 ${KEY1}`, '10.20.0.2', 22, []],
    ['a hashed entry', HASHED, '10.20.0.2', 22, [FP1]],
    ['a hashed [host]:port entry', HASHED, '10.20.0.3', 2222, [FP2]],
    ['a hashed entry of another host', HASHED, '10.20.0.4', 22, []],
    ['two keys for one host', `10.20.0.2 ${KEY1}\n10.20.0.2 ${KEY2}`, '10.20.0.2', 22, [FP1, FP2]],
    ['a revoked key', `10.20.0.2 ${KEY1}\n10.20.0.2 ${KEY2}\n@revoked * ${KEY1}`, '10.20.0.2', 22, [FP2]],
    ['a cert-authority line', `@cert-authority * ${KEY1}`, '10.20.0.2', 22, []],
    ['comments, blanks and garbage', `# 10.20.0.2 ${KEY1}\n\n10.20.0.2 ssh-ed25519 not-base64!\n10.20.0.2\n10.20.0.2 ${KEY2}`, '10.20.0.2', 22, [FP2]],
    ['a name, case-insensitively', `Rack-B.example ${KEY1}`, 'rack-b.example', 22, [FP1]],
    ['a dot in a pattern is literal', `10.20.0.2 ${KEY1}`, '10x20x0x2', 22, []],
  ])('%s', (_name, text, host, port, expected) => {
    expect(knownHostsPins(text, host, port)).toEqual(expected);
  });
});
