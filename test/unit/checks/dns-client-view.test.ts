import { describe, expect, it } from 'vitest';
import { clientViewFinding } from '../../../src/features/dns/client-view-finding.ts';
import type { ClientView } from '../../../src/features/dns/client-view.ts';

const FQDN = 'prod-k8s.maas.example';
const reply = (addresses: { ip: string; ttl: number }[], status = 'NOERROR'): ClientView => ({ outcome: 'reply', resolver: '10.20.0.2', askedBy: 'dig on the site-b rack', status, addresses });

describe('the client view beside MAAS\'s record', () => {
  it('MAAS and DNS agree: info, with the TTL', () => {
    const f = clientViewFinding(FQDN, ['10.0.0.1', '10.0.0.2'], reply([{ ip: '10.0.0.2', ttl: 30 }, { ip: '10.0.0.1', ttl: 30 }]));
    expect(f).toMatchObject({ severity: 'info', evidence: { state: 'matches', served: ['10.0.0.1', '10.0.0.2'], ttlLeft: 30 } });
    expect(f.summary).toBe('Clients get 10.0.0.1, 10.0.0.2 for prod-k8s.maas.example from 10.20.0.2 (dig on the site-b rack) (TTL 30 s), as MAAS records');
  });

  it('DNS serves something else than MAAS records: warning, both shown', () => {
    const f = clientViewFinding(FQDN, ['10.0.0.9'], reply([{ ip: '10.0.0.1', ttl: 12 }]));
    expect(f.severity).toBe('warning');
    expect(f.summary).toContain('MAAS records 10.0.0.9: DNS has not caught up with MAAS yet');
  });

  it('MAAS record empty: NXDOMAIN counts as serving nothing', () => {
    const f = clientViewFinding(FQDN, [], reply([], 'NXDOMAIN'));
    expect(f).toMatchObject({ severity: 'critical', evidence: { state: 'serving-nothing', status: 'NXDOMAIN' } });
  });

  it('MAAS unread: what DNS serves, without a comparison', () => {
    expect(clientViewFinding(FQDN, null, reply([{ ip: '10.0.0.1', ttl: 5 }])).evidence.state).toBe('maas-unread');
  });
});
