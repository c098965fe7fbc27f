import { describeError } from '../core/errors.ts';
import type { CommandResult } from './slack/command-result.ts';
import { commandName, type Invocation } from './slack/invocation.ts';
import type { AuditInput } from '../engine/audit/audit-entry.ts';
import type { AuditRecorder } from '../engine/audit/audit-log.ts';

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

/** One audit entry for a /maas command or an alert button: a refusal (policy or input), or a command and what became of it. */
export function commandAuditEntry(invocation: Invocation, result: CommandResult): AuditInput {
  const base = { actor: invocation.user, channel: invocation.channel };
  const said = `/maas ${invocation.text.trim()}`;
  if (result.outcome === 'unreadable') {
    return { ...base, kind: 'refusal', action: '(unreadable input)', outcome: 'refused', detail: `${result.problem} Input: ${JSON.stringify(invocation.text)}` };
  }
  const name = commandName(invocation);
  const action = invocation.source === 'button' ? `button ${invocation.text.trim()}` : name;
  const target = invocation.args[0];
  const about = target ? { target } : {};
  if (result.outcome === 'refused') return { ...base, ...about, kind: 'refusal', action, outcome: 'refused', detail: `${said} → ${result.reason}` };
  if (result.outcome === 'failed') return { ...base, ...about, kind: 'command', action, outcome: 'failed', detail: `${said} → ${describeError(result.error)}` };
  const jobs = result.outcome === 'queued' ? { jobId: result.jobIds.join(',') } : {};
  const outcome = result.outcome === 'queued' ? 'queued' : 'answered';
  return { ...base, ...about, ...jobs, kind: 'command', action, outcome, detail: `${said} → ${firstLine(result.reply.text)}` };
}

/** Records without ever failing the command path. */
export async function auditCommand(audit: AuditRecorder | undefined, invocation: Invocation, result: CommandResult): Promise<void> {
  if (!audit) return;
  await audit.record(commandAuditEntry(invocation, result)).catch(() => undefined);
}
