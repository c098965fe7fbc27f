import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/config.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { ROUTABLE_CHECKS } from '../../src/core/alert-route-rules.ts';
import { CHECKS, FIX_NAMES } from '../../src/features/registry.ts';

// alertmanager.routes is refused at start when a route could never run a check: the operator
// hears it from the config check, not from an alert that is only counted as unrouted at 3 a.m.

const KEY = 'ck1234567890abcdefgh:tk1234567890abcdefgh:ts1234567890abcdefghijkl';

function configWith(routes: string): string {
  return `
slack: { alertChannel: C0ALERTS, commandChannels: [C0OPS] }
maas: { region-a: { url: http://127.0.0.1:5240/MAAS, apiKey: env:MAAS_KEY } }
sites:
  site-b: { maas: region-a, machines: { zone: site-b } }
clusters:
  prod: { maas: region-a, kube: { namespace: capi } }
alertmanager:
  routes:
${routes}
`;
}

const load = (routes: string) => parseConfigText(configWith(routes), { path: 'am.yaml', env: { MAAS_KEY: KEY } });

function refusal(routes: string): ConfigError {
  try {
    load(routes);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected the config to be refused');
}

const KUBE_DOWN = `    - match: { alertname: KubeAPIDown }
      check: dns-check
      targetLabel: cluster`;

describe('alertmanager.routes are checked when the config loads', () => {
  it('accepts checks with a label target or a configured fixed target', () => {
    const loaded = load(`${KUBE_DOWN}
    - match: { alertname: MaasNodeCommissioningTimeout }
      check: mac-diff
      target: site-b`);
    expect(loaded.config.alertmanager?.routes.map((r) => r.check)).toEqual(['dns-check', 'mac-diff']);
  });

  it('refuses a route naming a repair, naming the key and the checks it may name', () => {
    const err = refusal(`${KUBE_DOWN}
    - match: { alertname: KubeAPIDown, site: b }
      check: fix-dns
      targetLabel: cluster`);
    expect(err.message).toBe('am.yaml: alertmanager.routes[1].check: "fix-dns" is a repair; routes may name only checks: dns-check, resolver-check, mac-diff, dhcp-check');
    expect(err.hint).toBe('Name the check instead (an alert runs only read-only checks; a person runs /maas fix-dns from its answer)');
  });

  it('refuses every repair the registry knows', () => {
    for (const fix of FIX_NAMES) {
      expect(refusal(`    - match: { alertname: X }\n      check: ${fix}\n      target: site-b`).message).toContain(`"${fix}" is a repair`);
    }
  });

  it('refuses a check that does not exist', () => {
    const err = refusal(`    - match: { alertname: KubeAPIDown }
      check: dns-chek
      targetLabel: cluster`);
    expect(err.message).toBe('am.yaml: alertmanager.routes[0].check: "dns-chek" is not a check; routes may name only checks: dns-check, resolver-check, mac-diff, dhcp-check');
    expect(err.hint).toBe('Set check to one of dns-check, resolver-check, mac-diff, dhcp-check');
  });

  it('refuses a fixed target that is not configured for that check, listing the known ones', () => {
    // prod is a cluster; mac-diff takes a site.
    const err = refusal(`    - match: { alertname: MaasNodeCommissioningTimeout }
      check: mac-diff
      target: prod`);
    expect(err.message).toBe('am.yaml: alertmanager.routes[0].target: no site "prod" (mac-diff takes a site); known: site-b');
    expect(err.hint).toMatch(/use targetLabel/);
  });

  it('keeps its table of checks equal to the registry (names and target kinds)', () => {
    expect(ROUTABLE_CHECKS).toEqual(Object.fromEntries(CHECKS.map((c) => [c.name, c.targetKind])));
  });
});
