import type { JobData } from '../../engine/job-types.ts';
import { ChatopsError, describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';

export type Enqueue = (jobName: string, data: JobData) => Promise<string>;

/**
 * The queue as a command sees it: bounded in time, and failing with a message a person can act on
 * (the cause goes to the log, not to Slack: a Redis URL may carry a password).
 */
export function guardedEnqueue<T = string>(enqueue: (jobName: string, data: JobData) => Promise<T>, options: { timeoutMs: number; log: Logger }): (jobName: string, data: JobData) => Promise<T> {
  return async (jobName, data) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new QueueTimeout(options.timeoutMs)), options.timeoutMs);
    });
    try {
      return await Promise.race([enqueue(jobName, data), timeout]);
    } catch (err) {
      options.log.error({ job: jobName, target: data.target, err: describeError(err) }, 'could not queue a job');
      if (err instanceof QueueTimeout) {
        throw new ChatopsError('REDIS_UNAVAILABLE', `the job queue did not answer within ${duration(options.timeoutMs)}, so the job may not run`, {
          hint: 'Try again in a minute; if this persists, tell whoever runs the bot that its Redis is not answering',
        });
      }
      if (err instanceof ChatopsError) throw err;
      throw new ChatopsError('REDIS_UNAVAILABLE', 'the job queue is unavailable, so nothing was queued', {
        hint: 'Try again in a minute; if this persists, tell whoever runs the bot that its Redis is not answering',
        cause: err,
      });
    } finally {
      clearTimeout(timer);
    }
  };
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

class QueueTimeout extends Error {
  constructor(ms: number) {
    super(`enqueue timed out after ${ms} ms`);
  }
}
