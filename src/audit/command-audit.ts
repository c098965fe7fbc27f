import { parseCommandText } from '../../commands/dispatch.ts';
import type { CommandReply } from '../command-types.ts';
import { describeError } from '../errors.ts';
import type { AuditInput } from './audit-entry.ts';
import type { AuditRecorder } from './audit-log.ts';

export interface CommandOutcome {
  user: string;
  channel: string;
  /** The text after `/maas`, as Slack sent it. */
  text: string;
  /** Why the command was refused by policy (channel, operator, permission), if it was. */
  refusal?: string;
  reply?: CommandReply;
  /** Ids of the jobs it queued. */
  jobIds: string[];
  error?: unknown;
}

/** Wraps a command's enqueue so that the audit entry can say what was queued. */
export function recordingEnqueue<D>(enqueue: (name: string, data: D) => Promise<string>): { enqueue: (name: string, data: D) => Promise<string>; jobIds: string[] } {
  const jobIds: string[] = [];
  return {
    jobIds,
    enqueue: async (name, data) => {
      const id = await enqueue(name, data);
      jobIds.push(id);
      return id;
    },
  };
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

/** One audit entry for a /maas command: a refusal (policy or input), or a command and what became of it. */
export function commandAuditEntry(o: CommandOutcome): AuditInput {
  const base = { actor: o.user, channel: o.channel };
  const parsed = parseCommandText(o.text);
  const said = `/maas ${o.text.trim()}`;
  if ('problem' in parsed) {
    return { ...base, kind: 'refusal', action: '(unreadable input)', outcome: 'refused', detail: `${parsed.problem} Input: ${JSON.stringify(o.text)}` };
  }
  const [name, target] = parsed.words;
  const action = name?.toLowerCase() ?? 'help';
  const about = target ? { target } : {};
  if (o.refusal) return { ...base, ...about, kind: 'refusal', action, outcome: 'refused', detail: `${said} → ${o.refusal}` };
  if (o.error !== undefined) return { ...base, ...about, kind: 'command', action, outcome: 'failed', detail: `${said} → ${describeError(o.error)}` };
  const failed = /^\/maas \S+ failed: /.test(o.reply?.text ?? '');
  const outcome = failed ? 'failed' : o.jobIds.length ? 'queued' : 'answered';
  const jobs = o.jobIds.length ? { jobId: o.jobIds.join(',') } : {};
  return { ...base, ...about, ...jobs, kind: 'command', action, outcome, detail: `${said} → ${firstLine(o.reply?.text ?? '')}` };
}

/** Records without ever failing the command path. */
export async function auditCommand(audit: AuditRecorder | undefined, outcome: CommandOutcome): Promise<void> {
  if (!audit) return;
  await audit.record(commandAuditEntry(outcome)).catch(() => undefined);
}
