/** Stable error codes; a user-facing error says what is wrong and how to fix it. */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_MISSING'
  | 'SECRET_UNRESOLVED'
  | 'UNKNOWN_TARGET'
  | 'USAGE'
  | 'MAAS_HTTP'
  | 'MAAS_UNREACHABLE'
  | 'SSH_HOST_KEY_REFUSED'
  | 'SSH_FAILED'
  | 'KUBE_FAILED'
  | 'REDIS_UNAVAILABLE'
  | 'SLACK_UNREACHABLE'
  | 'GUARD_REFUSED'
  | 'NOT_AUTHORIZED';

export class ChatopsError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ChatopsError';
    this.code = code;
    this.hint = options.hint;
  }

  /** What a person reads: the problem, then how to fix it. */
  describe(): string {
    return this.hint ? `${this.message}. ${this.hint}` : this.message;
  }
}

export class ConfigError extends ChatopsError {
  constructor(message: string, hint?: string) {
    super('CONFIG_INVALID', message, { hint });
    this.name = 'ConfigError';
  }
}

export class UsageError extends ChatopsError {
  constructor(message: string, hint?: string) {
    super('USAGE', message, { hint });
    this.name = 'UsageError';
  }
}

export class UnknownTargetError extends ChatopsError {
  readonly known: string[];

  constructor(kind: 'site' | 'cluster', name: string, known: string[]) {
    super('UNKNOWN_TARGET', `no ${kind} "${name}"`, {
      hint: known.length ? `known ${kind}s: ${known.join(', ')}` : `no ${kind}s are configured`,
    });
    this.name = 'UnknownTargetError';
    this.known = known;
  }
}

const CONFIG_OR_USAGE_CODES: readonly ErrorCode[] = ['CONFIG_INVALID', 'CONFIG_MISSING', 'USAGE', 'UNKNOWN_TARGET', 'SECRET_UNRESOLVED'];

/** A wrong config, environment or command line (exit 64), as against a peer that failed (exit 2). */
export function isConfigOrUsageError(err: unknown): boolean {
  return err instanceof ChatopsError && CONFIG_OR_USAGE_CODES.includes(err.code);
}

/** A message safe to show a person: never a stack trace. */
export function describeError(err: unknown): string {
  if (err instanceof ChatopsError) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
