import { describe, expect, it } from 'vitest';
import { scanTargetsFor, scheduledScans } from '../../../src/edge/alerts/scan-checks.ts';
import { parseConfigText } from '../../../src/core/config.ts';

const yaml = `
maas:
  region-a: { url: http://127.0.0.1:5240/MAAS, apiKey: env:K }
sites:
  site-a: { maas: region-a }
  site-b:
    maas: region-a
    rack: { resolver: 127.0.0.1, probe: direct }
    vmHosts: { default: { user: ops } }
clusters:
  prod: { maas: region-a }
schedules: { dns: 5m, macs: 15m }
`;
const { config } = parseConfigText(yaml, { path: 't.yaml', env: { K: 'aaaa:bbbb:cccc' } });

describe('scan targets', () => {
  it('schedules only what is configured and applicable', () => {
    expect(scheduledScans(config)).toEqual([
      { check: 'dns-check', target: 'prod', everyMs: 5 * 60_000 },
      { check: 'mac-diff', target: 'site-b', everyMs: 15 * 60_000 },
    ]);
  });

  it('a manual scan covers every applicable check, scheduled or not', () => {
    expect(scanTargetsFor(config, 'site-b')).toEqual([
      { check: 'resolver-check', target: 'site-b' },
      { check: 'mac-diff', target: 'site-b' },
    ]);
    expect(scanTargetsFor(config, 'site-a')).toEqual([]);
    expect(scanTargetsFor(config, 'prod', 'mac-diff')).toEqual([]);
    expect(scanTargetsFor(config, 'all').length).toBe(3);
  });
});
