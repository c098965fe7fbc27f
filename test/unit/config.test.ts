import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfigText, printableConfig } from '../../src/core/config.ts';
import { ConfigError } from '../../src/core/errors.ts';

const KEY = 'ck1234567890abcdefgh:tk1234567890abcdefgh:ts1234567890abcdefghijkl';

const valid = `
slack:
  alertChannel: C0ALERTS
  commandChannels: [C0OPS]
  approvers: [U0LEAD1]
  approvalTtl: 10m
maas:
  region-a:
    url: http://127.0.0.1:5240/MAAS
    apiKey: env:MAAS_KEY
sites:
  site-b:
    maas: region-a
    machines: { zone: site-b }
    rack:
      resolver: 127.0.0.2:5353
      ssh: { host: 127.0.0.2, user: ops, privateKey: file:/keys/rack, hostKey: "SHA256:${'A'.repeat(43)}" }
    vmHosts:
      default: { port: 22, user: ops, privateKey: file:/keys/vm }
      127.0.0.3: { hostKey: "SHA256:${'B'.repeat(43)}" }
clusters:
  prod:
    maas: region-a
    kube: { namespace: capi }
schedules:
  dns: 5m
`;

const files: Record<string, string> = { '/keys/rack': 'RACK-PRIVATE-KEY-MATERIAL\n', '/keys/vm': 'VM-PRIVATE-KEY-MATERIAL' };
const readFile = (p: string) => {
  const v = files[p];
  if (v === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
  return v;
};

function parse(text: string, env: NodeJS.ProcessEnv = { MAAS_KEY: KEY }) {
  return parseConfigText(text, { path: 'test.yaml', env, readFile });
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('loads a valid file with defaults, durations and resolved secrets', () => {
    const { config, secrets, warnings } = parse(valid);
    expect(warnings).toEqual([]);
    expect(config.slack.approvalTtlMs).toBe(600_000);
    expect(config.slack.selfApproval).toBe(false);
    expect(config.maas['region-a']?.apiKey.reveal()).toBe(KEY);
    const rack = config.sites['site-b']?.rack;
    expect(rack).toMatchObject({ resolverHost: '127.0.0.2', resolverPort: 5353, zone: 'maas-internal', probe: 'ssh' });
    expect(rack?.ssh?.privateKey?.reveal()).toBe('RACK-PRIVATE-KEY-MATERIAL');
    expect(config.sites['site-b']?.vmHostDefaults.user).toBe('ops');
    expect(config.sites['site-b']?.vmHosts['127.0.0.3']?.hostKey).toBe(`SHA256:${'B'.repeat(43)}`);
    expect(config.clusters.prod).toMatchObject({ maasCluster: 'prod', kube: { namespace: 'capi' } });
    expect(config.schedules).toEqual({ dns: 300_000 });
    // The rack key was used above; the VM host key is read (and redacted) only once something uses it.
    expect(secrets).toEqual(expect.arrayContaining([KEY, 'RACK-PRIVATE-KEY-MATERIAL']));
    expect(secrets).not.toContain('VM-PRIVATE-KEY-MATERIAL');
    expect(config.sites['site-b']?.vmHostDefaults.privateKey?.reveal()).toBe('VM-PRIVATE-KEY-MATERIAL');
    expect(secrets).toContain('VM-PRIVATE-KEY-MATERIAL');
  });

  it('reads a file: secret at its first use, so a process that uses none loads without the files', () => {
    const reads: string[] = [];
    const loaded = parseConfigText(valid, {
      path: 'test.yaml',
      env: { MAAS_KEY: KEY },
      readFile: (p) => {
        reads.push(p);
        throw Object.assign(new Error('not mounted'), { code: 'ENOENT' });
      },
    });
    expect(reads).toEqual([]);
    expect(loaded.deferred.map((d) => d.where)).toEqual(['sites.site-b.vmHosts.default.privateKey', 'sites.site-b.rack.ssh.privateKey']);
    const err = errorOf(() => loaded.config.sites['site-b']?.rack?.ssh?.privateKey?.reveal());
    expect(err.describe()).toMatch(/^test\.yaml: sites\.site-b\.rack\.ssh\.privateKey: cannot read \/keys\/rack \(ENOENT\)\. Check the path/);
    expect(reads).toEqual(['/keys/rack']);
  });

  it('approvals: one approver by default, a quorum per repair, and a quorum larger than the approvers is refused naming both keys', () => {
    expect(parse(valid).config.slack.approvalsRequired).toBe(1);
    const two = valid.replace('  approvalTtl: 10m\n', '  approvalTtl: 10m\n  approvalsRequiredFor: { fix-dns: 1 }\n');
    expect(parse(two).config.slack.approvalsRequiredFor).toEqual({ 'fix-dns': 1 });
    const tooMany = valid.replace('  approvalTtl: 10m\n', '  approvalTtl: 10m\n  approvalsRequiredFor: { fix-dns: 2 }\n');
    const err = errorOf(() => parse(tooMany));
    expect(err.message).toBe('test.yaml: slack.approvalsRequiredFor.fix-dns is 2, but slack.approvers lists 1: no such plan could ever run');
    expect(err.hint).toBe('List at least 2 approvers in slack.approvers, or lower slack.approvalsRequiredFor.fix-dns');
  });

  it('approvers: a user group id (S…) is accepted and its size is unknown, so a quorum of 2 is not refused; a @handle still is; the group cache defaults to 5 minutes', () => {
    const group = valid.replace('  approvers: [U0LEAD1]\n', '  approvers: [U0LEAD1, S0ONCALL]\n  approvalsRequired: 3\n');
    const { config } = parse(group);
    expect(config.slack.approvers).toEqual(['U0LEAD1', 'S0ONCALL']);
    expect(config.slack.userGroupCacheMs).toBe(5 * 60_000);
    expect(parse(group.replace('  approvalsRequired: 3\n', '  approvalsRequired: 3\n  userGroupCacheTtl: 1m\n')).config.slack.userGroupCacheMs).toBe(60_000);
    expect(errorOf(() => parse(valid.replace('  approvers: [U0LEAD1]\n', '  approvers: ["@oncall"]\n'))).message).toMatch(/slack\.approvers\.0.*user group id such as S0123ABCD/);
  });

  it('repair.commissionTimeout and commissionPollInterval are durations; absent, the defaults apply where they are used', () => {
    expect(parse(valid).config.repair).toEqual({ maxSubjects: 50 });
    const { config } = parse(`${valid}repair: { commissionTimeout: 45m, commissionPollInterval: 30s }\n`);
    expect(config.repair).toEqual({ maxSubjects: 50, commissionTimeoutMs: 2_700_000, commissionPollMs: 30_000 });
    expect(errorOf(() => parse(`${valid}repair: { commissionTimeout: forever }\n`)).message).toMatch(/repair\.commissionTimeout: must be a duration/);
  });

  it('concurrency.targets and concurrency.vmHosts are whole numbers; absent, the defaults apply where they are used', () => {
    expect(parse(valid).config.concurrency).toBeUndefined();
    expect(parse(`${valid}concurrency: { targets: 2, vmHosts: 8 }\n`).config.concurrency).toEqual({ targets: 2, vmHosts: 8 });
    expect(errorOf(() => parse(`${valid}concurrency: { targets: 0 }\n`)).message).toMatch(/concurrency\.targets/);
    expect(errorOf(() => parse(`${valid}concurrency: { vmHosts: 2.5 }\n`)).message).toMatch(/concurrency\.vmHosts/);
  });

  it('sites.<name>.watch.vmHosts is off unless set to true, and a misspelt key is named', () => {
    expect(parse(valid).config.sites['site-b']?.watchVmHosts).toBeUndefined();
    const on = valid.replace('    machines: { zone: site-b }\n', '    machines: { zone: site-b }\n    watch: { vmHosts: true }\n');
    expect(parse(on).config.sites['site-b']?.watchVmHosts).toBe(true);
    expect(parse(on.replace('vmHosts: true }', 'vmHosts: false }')).config.sites['site-b']?.watchVmHosts).toBeUndefined();
    expect(errorOf(() => parse(on.replace('watch: { vmHosts', 'watch: { vmHost'))).message).toBe('test.yaml: sites.site-b.watch: unknown key "vmHost"');
  });

  it('never prints a secret value, only its reference', () => {
    const { config } = parse(valid);
    const text = printableConfig(config);
    expect(text).not.toContain('ts1234567890');
    expect(text).not.toContain('RACK-PRIVATE');
    expect(text).toContain('env:MAAS_KEY');
    expect(JSON.stringify(config)).not.toContain('RACK-PRIVATE');
    expect(`${config.maas['region-a']?.apiKey}`).toBe('[redacted]');
  });

  it('names the missing file and how to fix it', () => {
    const err = errorOf(() => loadConfig({ path: '/nonexistent/maas.yaml', env: {} }));
    expect(err.describe()).toMatch(/\/nonexistent\/maas\.yaml: cannot read the config file \(no such file\)\. Pass --config/);
  });

  it('reports malformed YAML with the file name', () => {
    const err = errorOf(() => parse('slack: [unclosed'));
    expect(err.message).toMatch(/^test\.yaml:1:\d+: malformed YAML/);
  });

  it('says in YAML words what a value of the wrong shape should be, never zod\'s "Invalid input"', () => {
    const list = errorOf(() => parse(valid.replace('commandChannels: [C0OPS]', 'commandChannels: C0OPS')));
    expect(list.message).toBe('test.yaml: slack.commandChannels: must be a list ([a, b] or one "- item" a line), not a string');
    const flag = errorOf(() => parse(valid.replace('  approvalTtl: 10m', '  approvalTtl: 10m\n  selfApproval: nope')));
    expect(flag.message).toBe('test.yaml: slack.selfApproval: must be true or false, not a string');
    const url = errorOf(() => parse(valid.replace(/url: \S+/, 'url: 10.11.130.11')));
    expect(url.message).toBe('test.yaml: maas.region-a.url: must be a URL such as http://10.11.130.11:5240/MAAS (a scheme, a host and a path)');
    for (const e of [list, flag, url]) expect(e.describe()).not.toMatch(/Invalid|expected \w+, received/);
  });

  it('names the key and the fix for a missing key, a YAML error, a bad CIDR, an unknown clientView site and a site named like a cluster', () => {
    const missing = errorOf(() => parse(valid.replace('    apiKey: env:MAAS_KEY\n', '')));
    expect(missing.describe()).toBe('test.yaml: maas.region-a.apiKey: missing (a string is required here). Add apiKey: under maas.region-a; docs/configuration.md shows an example');

    const yaml = errorOf(() => parse(valid.replace('  approvalTtl: 10m', '  approvalTtl: [10m')));
    expect(yaml.describe()).toMatch(/^test\.yaml:\d+:\d+: malformed YAML: .+[^:]\. Fix the YAML at line \d+, column \d+ /);
    expect(yaml.describe()).not.toContain(':.');

    for (const bad of ['10.20.0.0/33', '10.20.0.300/24', 'fd00::/129']) {
      const cidr = errorOf(() => parse(valid.replace('      resolver: 127.0.0.2:5353', `      resolver: 127.0.0.2:5353\n      subnet: ${bad}`)));
      expect(cidr.message, bad).toMatch(/^test\.yaml: sites\.site-b\.rack\.subnet: /);
      expect(cidr.describe(), bad).toMatch(/prefix length \(0–32 for IPv4, 0–128 for IPv6\)/);
    }
    expect(parse(valid.replace('      resolver: 127.0.0.2:5353', '      resolver: 127.0.0.2:5353\n      subnet: 10.20.0.0/32')).config.sites['site-b']?.rack?.subnet).toBe('10.20.0.0/32');

    const view = errorOf(() => parse(valid.replace('    kube: { namespace: capi }', '    kube: { namespace: capi }\n    clientView: { resolver: 10.0.0.53, via: rack, site: site-x }')));
    expect(view.describe()).toBe('test.yaml: clusters.prod.clientView.site: no site "site-x"; known: site-b. Name a site under sites: whose rack runs dig, or set clientView.via: direct');

    const direct = errorOf(() => parse(valid.replace('    kube: { namespace: capi }', '    kube: { namespace: capi }\n    clientView: { resolver: 10.0.0.53, site: site-x }')));
    expect(direct.describe()).toBe('test.yaml: clusters.prod.clientView.site: no site "site-x"; known: site-b. Name a site under sites:, or remove clientView.site (via: direct asks from the bot and uses no site)');

    const clash = errorOf(() => parse(valid.replace('  prod:\n    maas: region-a', '  site-b:\n    maas: region-a')));
    expect(clash.describe()).toBe('test.yaml: clusters.site-b: a site is also named "site-b". Rename one of them: commands take a site or a cluster by name (/maas silence site-b would mute both)');
  });

  it('rejects unknown keys by path', () => {
    const err = errorOf(() => parse(valid.replace('alertChannel:', 'alertChanel:')));
    expect(err.message).toBe('test.yaml: slack: unknown key "alertChanel"');
  });

  it('rejects an unknown MAAS region naming the known ones', () => {
    const err = errorOf(() => parse(valid.replace('    maas: region-a\n    machines', '    maas: region-x\n    machines')));
    expect(err.message).toBe('test.yaml: sites.site-b.maas: no MAAS region "region-x"; known: region-a');
  });

  it('rejects a bad secret reference, an unset variable and an unreadable file', () => {
    expect(errorOf(() => parse(valid.replace('env:MAAS_KEY', 'vault:maas'))).message).toMatch(/maas\.region-a\.apiKey: unknown secret reference "vault:"/);
    expect(errorOf(() => parse(valid, {})).message).toMatch(/maas\.region-a\.apiKey: environment variable MAAS_KEY is not set/);
    const unreadable = parse(valid.replace('file:/keys/vm', 'file:/keys/none'));
    expect(errorOf(() => unreadable.config.sites['site-b']?.vmHostDefaults.privateKey?.reveal()).message).toMatch(/vmHosts\.default\.privateKey: cannot read \/keys\/none/);
  });

  it('accepts a literal secret with a warning', () => {
    const { config, warnings } = parse(valid.replace('env:MAAS_KEY', KEY));
    expect(config.maas['region-a']?.apiKey.reveal()).toBe(KEY);
    expect(warnings).toEqual(['maas.region-a.apiKey is written in test.yaml as a literal; prefer env:NAME or file:/path']);
    expect(warnings.join()).not.toContain(KEY);
  });

  it('rejects something that is not a MAAS API key', () => {
    expect(errorOf(() => parse(valid, { MAAS_KEY: 'not-a-key' })).message).toMatch(/not a MAAS API key/);
  });

  it('rejects hostile names before they reach a shell', () => {
    expect(errorOf(() => parse(valid.replace('site-b:\n', '"site;rm -rf /":\n'))).message).toMatch(/sites/);
    expect(errorOf(() => parse(valid.replace('resolver: 127.0.0.2:5353', 'resolver: "$(reboot)"'))).message).toMatch(/sites\.site-b\.rack\.resolver/);
    expect(errorOf(() => parse(valid.replace('{ zone: site-b }', '{ zone: "a`id`" }'))).message).toMatch(/machines\.zone/);
  });

  it('rejects a malformed duration and host key', () => {
    expect(errorOf(() => parse(valid.replace('dns: 5m', 'dns: soon'))).message).toMatch(/schedules\.dns: must be a duration/);
    expect(errorOf(() => parse(valid.replace(`SHA256:${'B'.repeat(43)}`, 'md5:aa'))).message).toMatch(/hostKey: must be a fingerprint/);
  });

  it('treats an empty file as an empty config', () => {
    const { config } = parse('');
    expect(config.sites).toEqual({});
  });
});
