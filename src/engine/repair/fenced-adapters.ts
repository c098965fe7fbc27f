import type { Adapters } from '../../adapters/adapters.ts';
import type { KubeClient } from '../../adapters/kube/types.ts';
import type { MaasClient } from '../../adapters/maas/types.ts';
import type { WriteOptions, WriteRoute } from './write-guard.ts';

/**
 * Client methods that only read. Everything else is a write: fenced, journaled, and not idempotent
 * unless listed below. A read missing here is refused outside a step, which a test shows at once;
 * a write missing from a list of writes would go unfenced, which nothing would show.
 */
const READS = /^(get|list|find)|^(whoami|version|powerParameters|unknownMacDiscoveries|countDiscoveries|queryEvents|close)$/;

/** Writes whose effect can be read back and that leave the world the same when sent twice. */
const IDEMPOTENT = new Set(['updateInterfaceMac', 'updateDnsResourceIps', 'updateSubnetDns', 'resaveIpRange', 'markFixed', 'setMaasClusterAnnotation']);

/**
 * The adapters a repair's step runner is built with: every MAAS and kube write goes through the
 * current step's write guard, so a step kind added later is fenced without doing anything. A write
 * outside a step is refused. SSH sessions read as much as they write, so a step that changes
 * something over SSH calls `context.write` itself.
 */
export function fencedAdapters(adapters: Adapters, route: WriteRoute): Adapters {
  return {
    maas: (region) => fenced<MaasClient>(adapters.maas(region), route, 'MAAS'),
    kube: (cluster) => fenced<KubeClient>(adapters.kube(cluster), route, 'kube'),
    ssh: adapters.ssh,
  };
}

function fenced<T extends object>(client: T, route: WriteRoute, peer: string): T {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || typeof value !== 'function' || READS.test(property)) return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      const options: WriteOptions = { idempotent: IDEMPOTENT.has(property) };
      return (...args: unknown[]) => {
        const guard = route.current;
        if (!guard) return Promise.reject(new Error(`${peer} ${property} refused: a repair writes only inside a journaled step`));
        return guard(property, () => method.apply(target, args), options);
      };
    },
  });
}
