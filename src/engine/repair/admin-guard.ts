import { describeError } from '../../core/errors.ts';
import { requireAdmin, type AdminCommand } from '../../adapters/maas/api-user.ts';
import type { MaasClient } from '../../adapters/maas/types.ts';
import type { StepRunner } from './executor.ts';

/**
 * A runner that asks who the API key is (cached, users/?op=whoami) before each step and refuses
 * the step when it is not a MAAS admin: a plan resumed after the key changed stops before it
 * sends or runs anything.
 */
export function adminGuarded(runner: StepRunner, maas: MaasClient, region: string, command: AdminCommand): StepRunner {
  return {
    async run(step, context) {
      try {
        await requireAdmin(maas, region, command);
      } catch (err) {
        return { outcome: 'refused', detail: describeError(err) };
      }
      return runner.run(step, context);
    },
  };
}
