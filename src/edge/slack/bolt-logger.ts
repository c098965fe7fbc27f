import { LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import type { Logger } from '../../core/log.ts';

const fromPino: Record<string, LogLevel> = {
  trace: LogLevel.DEBUG,
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
  fatal: LogLevel.ERROR,
  silent: LogLevel.ERROR,
};

/** Bolt and its Socket Mode client log through our logger, so its lines are redacted too. */
export function boltLogger(log: Logger, name = 'bolt'): BoltLogger {
  const child = log.child({ component: name });
  const line = (msg: unknown[]) => msg.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
  return {
    debug: (...msg) => child.debug(line(msg)),
    info: (...msg) => child.info(line(msg)),
    warn: (...msg) => child.warn(line(msg)),
    error: (...msg) => child.error(line(msg)),
    setLevel: () => undefined,
    getLevel: () => fromPino[log.level] ?? LogLevel.INFO,
    setName: () => undefined,
  };
}
