import { Counter, type Registry } from 'prom-client';
import { boundedLabel, METRIC_PREFIX } from './metrics.ts';

const OUTCOMES = ['accepted', 'duplicate', 'unmatched', 'unknown_target', 'unknown_check', 'unauthorized', 'invalid'] as const;

/** maas_chatops_alertmanager_total{outcome}: what became of what Alertmanager sent (checks queued, alerts not routed, requests refused). */
export function registerAlertmanagerMetrics(registry: Registry): (outcome: string, n: number) => void {
  const counter = new Counter({
    name: `${METRIC_PREFIX}alertmanager_total`,
    help: 'POST /alertmanager: checks queued (accepted), identical groups within the window (duplicate), alerts matching no route or naming an unknown target or check, requests refused (unauthorized, invalid)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return (outcome, n) => {
    if (n > 0) counter.inc({ outcome: boundedLabel(OUTCOMES, outcome) }, n);
  };
}
