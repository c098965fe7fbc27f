import { describe, expect, it } from 'vitest';
import { dnsHash, EMPTY_SET_HASH } from '../../../src/features/dns/dns-hash.ts';
import { clusterWatchView, healFollowUp, watchTriggers } from '../../../src/features/dns/watch-triggers.ts';
import { maasClusterObject, maasMachineObject } from '../../../lab/kube-sim/index.ts';

const HASH = dnsHash(['10.0.0.1']);
const mc = (hash?: string) => maasClusterObject({ name: 'prod', fqdn: 'prod.maas.example', ...(hash ? { lastAppliedHash: hash } : {}) });
const cp = (name: string, options: { powered?: boolean; state?: string; cluster?: string; deleting?: boolean } = {}) =>
  maasMachineObject({ name, cluster: options.cluster ?? 'prod', controlPlane: true, systemId: name, externalIps: ['10.0.0.1'], ...options });
const view = (hash: string | undefined, machines: ReturnType<typeof cp>[]) => clusterWatchView('prod', [mc(hash)], machines);
const codes = (before: ReturnType<typeof view> | undefined, after: ReturnType<typeof view>) => watchTriggers(before, after).map((t) => t.kind);

describe('what the watch sees of one cluster', () => {
  it('counts running control-plane machines of this cluster only, not those being deleted, powered off or of another cluster', () => {
    const v = view(HASH, [cp('a'), cp('b', { powered: false }), cp('c', { state: 'Releasing' }), cp('d', { deleting: true }), cp('e', { cluster: 'staging' })]);
    expect(v).toEqual({ present: true, hash: HASH, running: ['a'], existing: 3 });
  });

  it('a cluster that is not there', () => {
    expect(clusterWatchView('prod', [], [cp('a')])).toEqual({ present: false, hash: null, running: [], existing: 0 });
  });
});

describe('which changes run dns-check now', () => {
  it('nothing at the first look: there is nothing to compare with', () => {
    expect(codes(undefined, view(EMPTY_SET_HASH, []))).toEqual([]);
  });

  it('v4.8.0–v4.9.1: the hash turning into the empty-set hash is the wipe itself', () => {
    expect(codes(view(HASH, [cp('a')]), view(EMPTY_SET_HASH, [cp('a', { powered: false })]))).toEqual(['hash-emptied', 'last-cp-stopped']);
  });

  it('any other hash change: the controller applied another set', () => {
    expect(codes(view(EMPTY_SET_HASH, [cp('a')]), view(HASH, [cp('a')]))).toEqual(['hash-changed']);
  });

  it('before v4.8.0 (no annotation) and v4.9.2+ (hash kept): the last running control-plane machine stopping', () => {
    expect(codes(view(undefined, [cp('a'), cp('b')]), view(undefined, [cp('a', { powered: false }), cp('b')]))).toEqual([]);
    expect(codes(view(undefined, [cp('a', { powered: false }), cp('b')]), view(undefined, [cp('a', { powered: false }), cp('b', { state: 'Deploying', powered: false })]))).toEqual(['last-cp-stopped']);
  });

  it('a control-plane machine running again: the record should heal, so the alert can resolve', () => {
    expect(codes(view(HASH, [cp('a', { powered: false })]), view(HASH, [cp('a')]))).toEqual(['cp-running-again']);
  });

  it('the MaasCluster going away and coming back', () => {
    expect(codes(view(HASH, [cp('a')]), clusterWatchView('prod', [], [cp('a')]))).toEqual(['maascluster-gone']);
    expect(codes(clusterWatchView('prod', [], []), view(HASH, [cp('a')]))).toEqual(['maascluster-back']);
  });

  it('names the machines and the hashes in its reasons', () => {
    const [trigger] = watchTriggers(view(EMPTY_SET_HASH, [cp('a')]), view(HASH, [cp('a')]));
    expect(trigger?.text).toBe(`last-applied-dns-hash changed (${EMPTY_SET_HASH.slice(0, 12)} → ${HASH.slice(0, 12)}): the controller applied another IP set`);
  });

  it.each([
    { line: 'unguarded-hash-cache' as const, text: /cached it \(the PCP-6608 wipe; this release has no empty-set guard\)$/ },
    { line: 'guarded-hash-cache' as const, text: /cleared the record, which this release does only when no control-plane machine exists$/ },
    { line: 'no-hash-cache' as const, text: /keeps no hash cache, so something else wrote it$/ },
    { line: null, text: /applied an empty IP set \(the PCP-6608 wipe\)$/ },
  ])('the empty-set hash means something different on each controller line ($line)', ({ line, text }) => {
    const [trigger] = watchTriggers(view(HASH, [cp('a')]), view(EMPTY_SET_HASH, [cp('a')]), line);
    expect(trigger).toEqual({ kind: 'hash-emptied', text: expect.stringMatching(text) });
  });

  it('a control plane running again: each line says how the record comes back', () => {
    const again = (line: Parameters<typeof watchTriggers>[2]) => watchTriggers(view(HASH, [cp('a', { powered: false })]), view(HASH, [cp('a')]), line)[0]?.text;
    expect(again('no-hash-cache')).toBe('a control-plane machine runs again (a): the controller fills the record on this reconcile');
    expect(again('guarded-hash-cache')).toBe('a control-plane machine runs again (a): the controller writes its IP over the kept records');
    expect(again(null)).toBe('a control-plane machine runs again (a)');
  });

  it('asks for a follow-up check after a control plane runs again only where the heal leaves no trace the watch sees', () => {
    const before = view(undefined, [cp('a', { powered: false })]);
    const noAnnotation = view(undefined, [cp('a')]);
    const withHash = view(HASH, [cp('a')]);
    const again = watchTriggers(before, noAnnotation);
    expect(healFollowUp(again, noAnnotation, null, 20_000)?.kind).toBe('heal-follow-up');
    expect(healFollowUp(again, withHash, 'no-hash-cache', 20_000)?.text).toMatch(/^20 s after a control-plane machine ran again/);
    expect(healFollowUp(again, withHash, 'guarded-hash-cache', 20_000)).toBeNull();
    expect(healFollowUp(watchTriggers(view(undefined, [cp('a')]), view(undefined, [cp('a', { powered: false })])), noAnnotation, null, 20_000)).toBeNull();
  });
});
