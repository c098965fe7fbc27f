import type { AlertRecord, Silence } from '../src/edge/alerts/alert-record.ts';
import { formatDuration } from '../src/core/duration.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { mention } from '../src/core/mention.ts';

const MAX_LINES = 40;

/** `/maas alerts`: the open drift alerts with their age, and the silences in force. */
export const alertsCommand: CommandDefinition = {
  name: 'alerts',
  usage: 'alerts',
  summary: 'the open drift alerts, how long each has lasted, and which targets are silenced',
  run: async (ctx, args) => {
    if (args.length) return { text: 'Usage: /maas alerts', visibility: 'ephemeral', usage: true };
    if (!ctx.alerts) return { text: '/maas alerts: alert state is not available in this process (no Redis). Ask whoever runs the bot.', visibility: 'ephemeral' };
    const now = Date.now();
    const [open, silences] = await Promise.all([ctx.alerts.open(), ctx.alerts.silences(now)]);
    return { text: alertsText(open, silences, now), visibility: 'ephemeral' };
  },
};

export function alertsText(open: readonly AlertRecord[], silences: readonly Silence[], now: number): string {
  const lines: string[] = [];
  if (!open.length) lines.push('No open alerts.');
  else lines.push(`${open.length} open alert${open.length === 1 ? '' : 's'}, oldest first:`);
  for (const a of open.slice(0, MAX_LINES)) lines.push(`• ${alertLine(a, now)}`);
  if (open.length > MAX_LINES) lines.push(`…and ${open.length - MAX_LINES} more`);
  if (silences.length) {
    lines.push('Silenced:');
    for (const s of silences) lines.push(`• ${s.target} by ${mention(s.by)} for ${formatDuration(s.until - now)} more`);
  }
  return lines.join('\n');
}

function alertLine(a: AlertRecord, now: number): string {
  const word = a.kind === 'unchecked' ? 'COULD NOT CHECK' : a.status.toUpperCase();
  const findings = `${a.members.length} finding${a.members.length === 1 ? '' : 's'}`;
  const reopened = a.reopened ? ` · re-opened ${a.reopened}×` : '';
  return `${word} ${a.check} ${a.target}: ${a.verdict} · open ${formatDuration(Math.max(0, now - a.openedAt))} · ${findings}${reopened}`;
}
