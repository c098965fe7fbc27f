import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/config.ts';
import { ConfigError } from '../../src/core/errors.ts';

/*
 * A config file written to widen access or to smuggle input into SSH, MAAS or Kubernetes: channel
 * and user names where ids are required, VM host names and kube contexts carrying shell syntax, an
 * unbounded audit trail. Each is refused at load with the key that is wrong and what it should be.
 */

const KEY = 'ck1234567890abcdefgh:tk1234567890abcdefgh:ts1234567890abcdefghijkl';

function config(slack: string, extra = ''): string {
  return `slack:\n${slack}\nmaas:\n  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: env:MAAS_KEY }\nsites:\n  site-b:\n    maas: region-a\n    vmHosts:\n      default: { user: ops }\n${extra}clusters:\n  prod: { maas: region-a }\n`;
}
const parse = (yaml: string) => parseConfigText(yaml, { path: 'test.yaml', env: { MAAS_KEY: KEY } });

describe('config values that decide who may act, or that reach SSH, MAAS or Kubernetes, are validated', () => {
  it.each([
    ['a channel name instead of an id', '  commandChannels: ["#ops"]', /slack\.commandChannels\.0: must be a Slack channel id such as C0123ABCD \(not a #name\)/],
    ['a user name instead of an id', '  operators: ["@alice"]', /slack\.operators\.0: must be a Slack user id such as U0123ABCD or a user group id such as S0123ABCD \(not a @name\)/],
    ['a lowercase user id', '  approvers: [u0lead1]', /slack\.approvers\.0: must be a Slack user id/],
    ['an alert channel with markup', '  alertChannel: "<!channel>"', /slack\.alertChannel: must be a Slack channel id/],
    ['a repairer that is not a user id', '  permissions: { repairs: ["everyone"] }', /slack\.permissions\.repairs\.0: must be a Slack user id/],
    ['an unknown permissions key', '  permissions: { fixes: [U0OPS1] }', /slack\.permissions: unknown key "fixes"/],
  ])('%s', (_name, slack, message) => {
    expect(() => parse(config(slack))).toThrow(ConfigError);
    expect(() => parse(config(slack))).toThrow(message);
  });

  it.each([
    ['a VM host key with shell syntax', '      "h;reboot": { user: ops }\n', /sites\.site-b\.vmHosts/],
    ['a VM host key with $(…)', '      "$(id)": { user: ops }\n', /sites\.site-b\.vmHosts/],
  ])('%s', (_name, hosts, message) => {
    const yaml = config('  commandChannels: [C0OPS]').replace('      default: { user: ops }\n', `      default: { user: ops }\n${hosts}`);
    expect(() => parse(yaml)).toThrow(message);
  });

  it.each([
    ['a kube context with a newline', 'ctx\\nevil'],
    ['a kube context with a space', 'ctx evil'],
    ['a kube context with $(…)', '$(id)'],
  ])('%s', (_name, context) => {
    const yaml = config('  commandChannels: [C0OPS]').replace('  prod: { maas: region-a }', `  prod: { maas: region-a, kube: { context: "${context}" } }`);
    expect(() => parse(yaml)).toThrow(/clusters\.prod\.kube\.context: must be a kubeconfig context name/);
  });

  it('accepts ids, permissions, the audit knob and real context names', () => {
    const yaml = config('  commandChannels: [C0OPS, G0PRIVATE]\n  operators: [U0OPS1, W0ENTERPRISE]\n  permissions: { checks: [U0OPS1], repairs: [] }')
      .replace('  prod: { maas: region-a }', '  prod: { maas: region-a, kube: { context: "kubernetes-admin@mgmt" } }')
      .concat('audit: { key: "maas-chatops:audit", maxEntries: 5000 }\n');
    const { config: c } = parse(yaml);
    expect(c.slack.permissions).toEqual({ checks: ['U0OPS1'], repairs: [] });
    expect(c.audit).toEqual({ key: 'maas-chatops:audit', maxEntries: 5000 });
    expect(c.clusters.prod?.kube.context).toBe('kubernetes-admin@mgmt');
  });

  it('the audit trail is bounded by default', () => {
    expect(parse(config('  commandChannels: [C0OPS]')).config.audit).toEqual({ maxEntries: 10_000 });
  });

  it.each([
    ['an audit key with a space', 'audit: { key: "a b" }\n', /audit\.key: must be a Redis key/],
    ['an unbounded audit trail', 'audit: { maxEntries: 0 }\n', /audit\.maxEntries/],
  ])('%s', (_name, extra, message) => {
    expect(() => parse(config('  commandChannels: [C0OPS]').concat(extra))).toThrow(message);
  });
});
