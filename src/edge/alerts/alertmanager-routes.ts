import type { AlertRoute, Config } from '../../core/config.ts';
import { findCheck } from '../../features/registry.ts';
import { resolveTarget } from '../../core/targets.ts';
import type { WebhookAlert, WebhookGroup } from './alertmanager-payload.ts';

/** One check to run for a group: every alert of the group that routes to the same (check, target). */
export interface RoutedCheck {
  check: string;
  target: string;
  alerts: WebhookAlert[];
}

export type Unrouted = { alert: WebhookAlert; reason: 'unmatched' | 'unknown_target' | 'unknown_check'; detail: string };

/** The first route whose every `match` label the alert carries with that value (Alertmanager's own routes read top-down too). */
export function routeFor(routes: readonly AlertRoute[], alert: WebhookAlert): AlertRoute | undefined {
  return routes.find((r) => Object.entries(r.match).every(([k, v]) => alert.labels[k] === v));
}

/** Groups a webhook's alerts by the check they route to; what routes nowhere is said, not guessed. */
export function routeGroup(config: Config, group: WebhookGroup): { checks: RoutedCheck[]; unrouted: Unrouted[] } {
  const routes = config.alertmanager?.routes ?? [];
  const checks = new Map<string, RoutedCheck>();
  const unrouted: Unrouted[] = [];
  for (const alert of group.alerts) {
    const route = routeFor(routes, alert);
    if (!route) {
      unrouted.push({ alert, reason: 'unmatched', detail: 'no alertmanager.routes entry matches its labels' });
      continue;
    }
    const target = route.target ?? alert.labels[route.targetLabel ?? ''];
    const spec = findCheck(route.check);
    if (!spec) {
      unrouted.push({ alert, reason: 'unknown_check', detail: `"${route.check}" is not a check` });
      continue;
    }
    if (!target || !knownTarget(config, spec.targetKind, target)) {
      unrouted.push({ alert, reason: 'unknown_target', detail: `${route.targetLabel ? `label ${route.targetLabel}=` : ''}${JSON.stringify(target ?? null)} is not a configured ${spec.targetKind}` });
      continue;
    }
    const key = `${route.check}\0${target}`;
    const entry = checks.get(key) ?? { check: route.check, target, alerts: [] };
    entry.alerts.push(alert);
    checks.set(key, entry);
  }
  return { checks: [...checks.values()], unrouted };
}

function knownTarget(config: Config, kind: 'site' | 'cluster', name: string): boolean {
  try {
    resolveTarget(config, kind, name);
    return true;
  } catch {
    return false;
  }
}
