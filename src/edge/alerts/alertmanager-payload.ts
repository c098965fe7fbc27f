/**
 * Alertmanager's webhook body, version 4 (prometheus/alertmanager notify/webhook/webhook.go:
 * Message{template.Data, version, groupKey, truncatedAlerts}; template/template.go Data and Alert).
 * Only what the bot reads is kept; the rest (annotations, URLs) may hold anything and is dropped.
 */

export interface WebhookAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  fingerprint: string;
  startsAt: string;
}

export interface WebhookGroup {
  version: '4';
  groupKey: string;
  status: 'firing' | 'resolved';
  receiver: string;
  alerts: WebhookAlert[];
  truncatedAlerts: number;
}

export type ParsedWebhook = { ok: true; group: WebhookGroup } | { ok: false; error: string };

/** A body that is not a version 4 webhook is refused with what is wrong (Alertmanager logs the 400). */
export function parseWebhook(body: unknown): ParsedWebhook {
  if (!isObject(body)) return { ok: false, error: 'the body is not a JSON object' };
  if (body.version !== '4') return { ok: false, error: `version is ${JSON.stringify(body.version ?? null)}; this endpoint reads Alertmanager's webhook version "4"` };
  if (typeof body.groupKey !== 'string' || body.groupKey === '') return { ok: false, error: 'groupKey is missing' };
  if (body.status !== 'firing' && body.status !== 'resolved') return { ok: false, error: 'status must be "firing" or "resolved"' };
  if (!Array.isArray(body.alerts)) return { ok: false, error: 'alerts is not a list' };
  const alerts: WebhookAlert[] = [];
  for (const [i, raw] of body.alerts.entries()) {
    if (!isObject(raw) || !isObject(raw.labels) || (raw.status !== 'firing' && raw.status !== 'resolved')) return { ok: false, error: `alerts[${i}] has no labels or status` };
    const labels = Object.fromEntries(Object.entries(raw.labels).filter((e): e is [string, string] => typeof e[1] === 'string'));
    alerts.push({ status: raw.status, labels, fingerprint: typeof raw.fingerprint === 'string' ? raw.fingerprint : '', startsAt: typeof raw.startsAt === 'string' ? raw.startsAt : '' });
  }
  return {
    ok: true,
    group: {
      version: '4',
      groupKey: body.groupKey,
      status: body.status,
      receiver: typeof body.receiver === 'string' ? body.receiver : '',
      alerts,
      truncatedAlerts: typeof body.truncatedAlerts === 'number' ? body.truncatedAlerts : 0,
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
