import { describe, expect, it } from 'vitest';
import { matchesLabelSelector, parseLabelSelector } from '../../../lab/kube-sim/label-selector.ts';
import { mergePatch } from '../../../lab/kube-sim/merge-patch.ts';

describe('label selectors', () => {
  const labels = { 'cluster.x-k8s.io/cluster-name': 'prod', 'cluster.x-k8s.io/control-plane': '' };
  it.each([
    ['cluster.x-k8s.io/cluster-name=prod', true],
    ['cluster.x-k8s.io/cluster-name==prod', true],
    ['cluster.x-k8s.io/cluster-name=staging', false],
    ['cluster.x-k8s.io/cluster-name!=staging', true],
    ['cluster.x-k8s.io/control-plane', true],
    ['!cluster.x-k8s.io/control-plane', false],
    ['cluster.x-k8s.io/control-plane=', true],
    ['cluster.x-k8s.io/cluster-name=prod,!missing', true],
    ['', true],
  ])('%s → %s', (selector, expected) => {
    const parsed = parseLabelSelector(selector);
    expect(parsed).not.toBeNull();
    expect(matchesLabelSelector(labels, parsed ?? [])).toBe(expected);
  });

  it('rejects a malformed selector (set-based ones are not simulated: the client never sends them)', () => {
    expect(parseLabelSelector('a=b=c')).toBeNull();
  });
});

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, replaces values, deletes on null, leaves the input alone', () => {
    const target = { metadata: { name: 'prod', annotations: { a: '1', b: '2' } }, spec: { list: [1, 2] } };
    const out = mergePatch(target, { metadata: { annotations: { b: null, c: '3' } }, spec: { list: [3] } });
    expect(out).toEqual({ metadata: { name: 'prod', annotations: { a: '1', c: '3' } }, spec: { list: [3] } });
    expect(target.metadata.annotations).toEqual({ a: '1', b: '2' });
  });
});
