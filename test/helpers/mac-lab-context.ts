import type { JobContext } from '../../src/engine/job-types.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { MacLab } from '../../lab/vmhost-sim/index.ts';

/** A job context on a mac lab's config and adapters, logging nowhere. */
export function macLabContext(lab: MacLab): JobContext {
  return { config: lab.config, adapters: lab.adapters, log: silentLogger() };
}
