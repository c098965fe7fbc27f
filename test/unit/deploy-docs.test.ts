import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { botAclLine } from '../../src/engine/queue/redis-acl.ts';
import { TO_WRITE } from '../../scripts/check-docs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const findings = readFileSync(join(ROOT, 'docs/findings.md'), 'utf8');
const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');

/** Finding codes the checks emit: `code: 'X'` in src/features and jobs. */
function emittedCodes(): string[] {
  const codes = new Set<string>();
  for (const dir of ['src/features', 'jobs']) {
    for (const file of readdirSync(join(ROOT, dir), { recursive: true }) as string[]) {
      if (!file.endsWith('.ts')) continue;
      const text = readFileSync(join(ROOT, dir, file), 'utf8');
      for (const m of text.matchAll(/\bcode:\s*'([A-Z][A-Z0-9_]+)'/g)) codes.add(m[1] as string);
    }
  }
  return [...codes].sort();
}

/**
 * The codes promised to operators (their alert rules and scripts match on them): each stays
 * emitted and documented, whatever the checks' code comes to look like.
 */
const PROMISED_CODES = [
  'DNS_CP_NOT_RUNNING', 'DNS_CP_NO_IP_IN_SUBNETS', 'DNS_DRIFT', 'DNS_EMPTY_HASH_CACHED', 'DNS_HASH_MASKS_DRIFT', 'DNS_RECORD_AMBIGUOUS',
  'DNS_RECORD_EMPTY', 'DNS_RECORD_MISSING', 'MAC_AMBIGUOUS', 'MAC_DOMAIN_MISSING', 'MAC_DRIFT', 'MAC_HOST_UNREACHABLE', 'MAC_IN_USE',
  'MAC_NOT_VIRSH', 'PROBE_FAILED', 'RESOLVER_BAD_ANSWER', 'RESOLVER_NO_REPLY', 'RESOLVER_SERVFAIL',
];

function anchorsOf(markdown: string): string[] {
  return [...markdown.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1] as string);
}

describe('docs/findings.md', () => {
  const documented = anchorsOf(findings);

  it('still emits every code promised to operators', () => {
    expect(emittedCodes()).toEqual(expect.arrayContaining(PROMISED_CODES));
  });

  it('has a section with a stable lower-case anchor for every code the checks emit and every promised one', () => {
    const codes = [...new Set([...emittedCodes(), ...PROMISED_CODES, 'DNS_NOT_MANAGED', 'DNS_CONTROLLER_VULNERABLE', 'MAC_SUMMARY'])];
    expect(codes.length).toBeGreaterThanOrEqual(20);
    for (const code of codes) {
      expect(documented, code).toContain(code.toLowerCase());
      expect(findings, code).toMatch(new RegExp(`<a id="${code.toLowerCase()}"></a>\\n### ${code}\\n`));
    }
  });

  it('documents no code twice, and every in-page link lands on an anchor', () => {
    expect(new Set(documented).size).toBe(documented.length);
    const headingAnchors = [...findings.matchAll(/^## (.+)$/gm)].map((m) => (m[1] as string).toLowerCase().replace(/[^a-z0-9 -]/g, '').trim().replace(/ +/g, '-'));
    for (const m of findings.matchAll(/\]\(#([^)]+)\)/g)) {
      expect([...documented, ...headingAnchors], m[1]).toContain(m[1]);
    }
  });

  it('says, for each problem code, what it means and what to do', () => {
    const sections = findings.split(/<a id="/).slice(1);
    for (const section of sections) {
      const code = section.slice(0, section.indexOf('"'));
      expect(section, code).toContain('**Means**');
      if (!['resolver_ok', 'mac_not_virsh'].includes(code)) expect(section, code).toContain('**What to do**');
      // npm run docs:checks writes a new code's section with these marks: the lines are still to write.
      expect(section, `${code}: write the lines npm run docs:checks marked`).not.toContain(TO_WRITE);
    }
  });
});

describe('docs/operations.md', () => {
  it.each(['Sizing', 'Scaling workers', 'Redis', 'Upgrading', 'Rotating keys', 'Adding a site or a cluster', 'Health endpoints', 'Metrics'])('has a section "%s"', (title) => {
    expect(operations).toMatch(new RegExp(`^## ${title}$`, 'm'));
  });

  it('names the health endpoints and the Redis settings the manifests use', () => {
    for (const text of ['/healthz', '/readyz', '/metrics', 'noeviction', 'appendonly yes', 'DASHBOARD_USER', 'DASHBOARD_PASSWORD', 'HOST', 'METRICS_PORT', 'MAAS_MAX_BODY_MIB']) {
      expect(operations, text).toContain(text);
    }
  });

  it('says how to turn on Alertmanager in the manifests: the token in the env Secret, the bot Service\'s URL', () => {
    const section = operations.slice(operations.indexOf('## Alertmanager'), operations.indexOf('## Health endpoints'));
    expect(section).toContain('`ALERTMANAGER_TOKEN`');
    expect(section).toContain('`maas-chatops-env`');
    expect(section).toContain('http://maas-chatops-bot.maas-chatops.svc/alertmanager');
    expect(readFileSync(join(ROOT, 'deploy/bot.yaml'), 'utf8')).toMatch(/kind: Service\nmetadata:\n {2}name: maas-chatops-bot\n {2}namespace: maas-chatops\n[\s\S]*port: 80, targetPort: http/);
    expect(readFileSync(join(ROOT, 'deploy/secret.yaml'), 'utf8')).toContain('ALERTMANAGER_TOKEN');
  });

  it('gives the exact Redis ACL rule the failover and TLS tests run under, and says Cluster is not supported', () => {
    expect(operations).toContain(`\n${botAclLine('maas-chatops', '<password>', 'maas-chatops')}\n`);
    expect(operations).toMatch(/^### Redis Cluster is not supported$/m);
    for (const setting of ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD', 'REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS_CA']) {
      expect(operations, setting).toContain(`\`${setting}\``);
    }
  });
});

