import { describe, expect, it } from 'vitest';
import type { StepResult } from '../../../src/core/report.ts';
import { progressLine } from '../../../src/engine/repair/plan-outcomes.ts';
import { subjectsPhrase } from '../../../src/engine/repair/subjects-phrase.ts';

/* A repair's progress in its plan's thread, as the approver reads it line by line. */

const result = (subject: string, action: string, detail: string, outcome: StepResult['outcome'] = 'verified'): StepResult => ({ subject, action, outcome, detail });

describe('progressLine', () => {
  it('says the subject once when a step\'s detail opens with it', () => {
    const canary = 'canary site-b-node10';
    const line = progressLine(canary, [result(canary, 'commission-canary', `${canary} commissioned: Ready within 1 min; a new boot got DHCP`)]);
    expect(line).toBe('canary site-b-node10: ✅ commission-canary verified (commissioned: Ready within 1 min; a new boot got DHCP)');
    expect(line.split('site-b-node10')).toHaveLength(2);
  });

  it('drops a leading subject followed by a colon too, and in every step of the line', () => {
    const line = progressLine('site-b-node1', [result('site-b-node1', 'mark-broken', 'site-b-node1: Failed commissioning → Broken'), result('site-b-node1', 'commission', 'site-b-node1 did not commission: timeout', 'failed')]);
    expect(line).toBe('site-b-node1: ✅ mark-broken verified (Failed commissioning → Broken) → ❌ commission failed (did not commission: timeout)');
  });

  it('keeps a detail that names the subject elsewhere, or a longer name that only starts like it', () => {
    expect(progressLine('site-b', [result('site-b', 'check-resolver', 'Nodes at site-b resolve through the forwarder')])).toBe('site-b: ✅ check-resolver verified (Nodes at site-b resolve through the forwarder)');
    expect(progressLine('site-b-node1', [result('site-b-node1', 'set-mac', 'site-b-node10 holds that MAC', 'refused')])).toBe('site-b-node1: ⛔ set-mac refused (site-b-node10 holds that MAC)');
  });
});

describe('subjectsPhrase: what the steps of a run act on', () => {
  it('counts machines and DNS records, and names the different things of any other repair', () => {
    expect(subjectsPhrase('fix-macs', ['site-b-node1', 'site-b-node1', 'site-b-node2'])).toBe('2 machines');
    expect(subjectsPhrase('fix-dns', ['prod-k8s.maas.example', 'prod-k8s.maas.example'])).toBe('1 DNS record');
    expect(subjectsPhrase('fix-resolver', ['forwarder 127.0.0.1:5353', 'forwarder 127.0.0.1:5353', 'subnet 10.20.0.0/24', 'site-b', 'canary site-b-node10'])).toBe('forwarder 127.0.0.1:5353, subnet 10.20.0.0/24, site-b and canary site-b-node10');
    expect(subjectsPhrase('fix-resolver', ['a', 'b', 'c', 'd', 'e'])).toBe('5 subjects');
  });
});
