/**
 * What Alertmanager's webhook notifier POSTs (version 4): notify/webhook/webhook.go's Message
 * embeds template.Data (receiver, status, alerts, groupLabels, commonLabels, commonAnnotations,
 * externalURL) and adds version, groupKey and truncatedAlerts; each alert is template/template.go's
 * Alert. A resolved alert carries its endsAt; a firing one Go's zero time.
 */
export interface LabWebhookAlert {
  labels: Record<string, string>;
  fingerprint: string;
  summary: string;
}

export interface LabWebhook {
  status: 'firing' | 'resolved';
  groupKey: string;
  /** The route's group_by labels, as Alertmanager puts them in groupLabels. */
  groupLabels: Record<string, string>;
  alerts: LabWebhookAlert[];
}

const STARTS_AT = '2026-12-01T03:00:00Z';
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

export function webhookBody(hook: LabWebhook, now: Date = new Date()): Record<string, unknown> {
  const common = commonLabels(hook.alerts);
  return {
    receiver: 'maas-chatops',
    status: hook.status,
    alerts: hook.alerts.map((a) => ({
      status: hook.status,
      labels: a.labels,
      annotations: { summary: a.summary },
      startsAt: STARTS_AT,
      endsAt: hook.status === 'resolved' ? now.toISOString() : GO_ZERO_TIME,
      generatorURL: 'http://prometheus.lab.invalid/graph',
      fingerprint: a.fingerprint,
    })),
    groupLabels: hook.groupLabels,
    commonLabels: common,
    commonAnnotations: {},
    externalURL: 'http://alertmanager.lab.invalid:9093',
    version: '4',
    groupKey: hook.groupKey,
    truncatedAlerts: 0,
  };
}

function commonLabels(alerts: readonly LabWebhookAlert[]): Record<string, string> {
  const [first, ...rest] = alerts;
  if (!first) return {};
  return Object.fromEntries(Object.entries(first.labels).filter(([k, v]) => rest.every((a) => a.labels[k] === v)));
}

/** POSTs the webhook with `Authorization: Bearer <token>`, as http_config.authorization makes Alertmanager do. */
export async function postWebhook(appUrl: string, token: string, hook: LabWebhook): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${appUrl}/alertmanager`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(webhookBody(hook)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the error message.
  }
  return { status: res.status, body };
}
