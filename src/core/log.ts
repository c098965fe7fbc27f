import pino, { type Logger } from 'pino';
import type { Redactor } from './redact.ts';

export type { Logger };

/** JSON logs to the given stream (stderr by default, so `--json` stdout stays clean). */
export function createLogger(options: { level?: string; redact?: Redactor; destination?: NodeJS.WritableStream } = {}): Logger {
  const redact = options.redact ?? ((s: string) => s);
  const destination = options.destination ?? process.stderr;
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { app: 'maas-chatops' },
      hooks: {
        streamWrite: (line: string) => redact(line),
      },
    },
    destination as pino.DestinationStream,
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
