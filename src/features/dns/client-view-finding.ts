import type { ClientView } from './client-view.ts';
import type { Finding } from '../../core/report.ts';

/*
 * MAAS's record beside what clients get for the API name. It never changes the verdict: it says
 * whether an outage in MAAS's record has reached clients yet, and for how long caches keep the
 * old answer.
 */
export function clientViewFinding(fqdn: string, recorded: string[] | null, view: ClientView): Finding {
  const base = { fqdn, resolver: view.resolver, askedBy: view.askedBy, ...(view.command ? { command: view.command } : {}), maasRecord: recorded };
  if (view.outcome !== 'reply') {
    return {
      code: 'DNS_CLIENT_VIEW',
      severity: 'info',
      subject: fqdn,
      summary: `What clients get for ${fqdn} from ${view.resolver} could not be read (${view.detail}); the verdict stands on MAAS's record`,
      evidence: { ...base, outcome: view.outcome, detail: view.detail },
    };
  }
  const served = [...new Set(view.addresses.map((a) => a.ip))].sort();
  const ttlLeft = view.addresses.length ? Math.max(...view.addresses.map((a) => a.ttl)) : null;
  const evidence = { ...base, status: view.status, served, ttlLeft };
  const shown = served.length ? served.join(', ') : `nothing (${view.status})`;
  const where = `${view.resolver} (${view.askedBy})`;
  if (recorded !== null && recorded.length === 0) {
    return served.length
      ? {
          code: 'DNS_CLIENT_VIEW',
          severity: 'warning',
          subject: fqdn,
          summary: `MAAS record empty, DNS still serving cached/old answers (TTL left: ${ttlLeft} s): ${where} answers ${shown}; clients lose ${fqdn} when that runs out`,
          evidence: { ...evidence, state: 'still-serving' },
        }
      : {
          code: 'DNS_CLIENT_VIEW',
          severity: 'critical',
          subject: fqdn,
          summary: `MAAS record empty, DNS already serving nothing: ${where} answers ${shown}; the outage has reached clients`,
          evidence: { ...evidence, state: 'serving-nothing' },
        };
  }
  const same = recorded !== null && recorded.length === served.length && recorded.every((ip) => served.includes(ip));
  if (same || recorded === null) {
    return {
      code: 'DNS_CLIENT_VIEW',
      severity: 'info',
      subject: fqdn,
      summary: `Clients get ${shown} for ${fqdn} from ${where}${ttlLeft !== null ? ` (TTL ${ttlLeft} s)` : ''}${same ? ', as MAAS records' : ''}`,
      evidence: { ...evidence, state: same ? 'matches' : 'maas-unread' },
    };
  }
  return {
    code: 'DNS_CLIENT_VIEW',
    severity: 'warning',
    subject: fqdn,
    summary: `Clients get ${shown} for ${fqdn} from ${where}${ttlLeft !== null ? ` (TTL ${ttlLeft} s)` : ''}, MAAS records ${recorded.join(', ')}: DNS has not caught up with MAAS yet`,
    evidence: { ...evidence, state: 'differs' },
  };
}
