/**
 * Work a command does after its ack (parse, queue, answer, audit) waits its turn here, a few
 * at a time. Under a burst, Node would otherwise interleave that work with the handling of
 * requests not yet acknowledged, and every ack would wait for the whole burst's work: with a
 * few turns at a time, acks go out first and the answers follow (response_url stays valid for
 * 30 minutes). Throughput is the same; only the order changes.
 */
export interface AfterAck {
  /** Resolves when this caller may start; call the returned release when it is done. */
  turn(): Promise<() => void>;
  readonly active: number;
  readonly waiting: number;
}

export function afterAckQueue(concurrency: number): AfterAck {
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return {
    turn: () => {
      if (active < concurrency) {
        active += 1;
        return Promise.resolve(once(release));
      }
      return new Promise((resolve) => waiting.push(() => resolve(once(release))));
    },
    get active() {
      return active;
    },
    get waiting() {
      return waiting.length;
    },
  };
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
