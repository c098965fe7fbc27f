/**
 * Would MAAS accept `commission` now? canonical/maas 3.4 models/node.py `start` refuses it with 400
 * "Ephemeral operating system <os> <release> is unavailable." unless the commissioning release
 * (config commissioning_osystem / commissioning_distro_series) is among the boot images that every
 * connected rack holds (clusterrpc/boot_images.py get_common_available_boot_images: the intersection
 * over the racks the region can reach; no rack, no image). The architecture does not enter that
 * rule; it decides whether the machine can then PXE-boot the commissioning environment.
 *
 * Read before a plan breaks a machine: get_config twice, rackcontrollers/, and list_boot_images
 * per rack (an admin method). What the API cannot show, the verdict says it cannot tell.
 */
import { describeError } from '../../core/errors.ts';
import type { MaasClient, MaasUser, RackBootImages, RackController } from '../../adapters/maas/types.ts';

export type CommissionPreflight =
  | {
      verdict: 'can-start';
      /** `ubuntu/focal`: the image name list_boot_images uses. */
      image: string;
      /** Connected racks, each holding the image. */
      racks: string[];
      /** Architectures (`amd64`) for which some connected rack holds the image. */
      architectures: string[];
    }
  | { verdict: 'refused'; image: string; reason: string; fix: string }
  | { verdict: 'unknown'; reason: string };

const IMPORT_FIX =
  'import the boot images (MAAS UI: Images → select the release and architecture → Save selection; or `maas <profile> boot-resources import`), wait until every rack controller reads Synced (Controllers page), then run fix-macs again';

export async function commissionPreflight(maas: MaasClient, apiUser: MaasUser | undefined): Promise<CommissionPreflight> {
  let osystem: unknown, series: unknown, racks: RackController[];
  try {
    [osystem, series, racks] = await Promise.all([maas.getConfig('commissioning_osystem'), maas.getConfig('commissioning_distro_series'), maas.listRackControllers()]);
  } catch (err) {
    return { verdict: 'unknown', reason: `the commissioning release or the rack controllers could not be read (${describeError(err)})` };
  }
  if (typeof osystem !== 'string' || typeof series !== 'string' || !osystem || !series) {
    return { verdict: 'unknown', reason: 'MAAS did not name its commissioning release (config commissioning_osystem / commissioning_distro_series)' };
  }
  // list_boot_images names an image `<os>/<release>`, a custom one by its release alone (models/node.py).
  const image = osystem === 'custom' ? series : `${osystem}/${series}`;
  if (!racks.length) {
    // MAAS lists rack controllers to admins only: a non-admin's empty list says nothing (3.4.10 row rackcontrollers, operator).
    if (!apiUser?.is_superuser) return { verdict: 'unknown', reason: `MAAS lists no rack controller, and it lists them to admins only (the API key's user ${apiUser ? `${apiUser.username} is not one` : 'could not be read'}), so it cannot tell whether ${image} is on the racks` };
    return { verdict: 'refused', image, reason: `MAAS has no rack controller, so no boot image: it would refuse commission (400 "Ephemeral operating system ${osystem} ${series} is unavailable.")`, fix: 'connect a rack controller to the region (`maas init rack` on the rack host), let it sync the boot images, then run fix-macs again' };
  }
  let listed: { rack: RackController; images: RackBootImages }[];
  try {
    listed = await Promise.all(racks.map(async (rack) => ({ rack, images: await maas.listBootImages(rack.system_id) })));
  } catch (err) {
    return { verdict: 'unknown', reason: `the racks' boot images could not be read (${describeError(err)})` };
  }
  const connected = listed.filter((r) => r.images.connected);
  if (!connected.length) {
    const names = listed.map((r) => r.rack.hostname).join(', ');
    return {
      verdict: 'refused',
      image,
      reason: `no rack controller is connected to the region (${names}): MAAS takes boot images from connected racks only, so it would refuse commission (400 "Ephemeral operating system ${osystem} ${series} is unavailable.")`,
      fix: `reconnect a rack controller (check that rackd runs on ${names} and reaches the region), then run fix-macs again`,
    };
  }
  const without = connected.filter((r) => !r.images.images.some((i) => i.name === image));
  if (without.length) {
    const names = without.map((r) => r.rack.hostname).join(', ');
    return {
      verdict: 'refused',
      image,
      reason: `${image}, MAAS's commissioning release, is not among the boot images of connected rack controller${without.length === 1 ? '' : 's'} ${names}: MAAS needs it on every connected rack and would refuse commission (400 "Ephemeral operating system ${osystem} ${series} is unavailable.")`,
      fix: IMPORT_FIX,
    };
  }
  const architectures = [...new Set(connected.flatMap((r) => r.images.images.filter((i) => i.name === image).map((i) => i.architecture)))].sort();
  return { verdict: 'can-start', image, racks: connected.map((r) => r.rack.hostname), architectures };
}

/** Why this machine cannot be commissioned now, or null; `amd64/generic` is matched by its architecture. */
export function commissionRefusal(preflight: CommissionPreflight, architecture: string | undefined, machine: 'to-break' | 'already-broken' = 'to-break'): string | null {
  if (preflight.verdict === 'unknown') {
    const risk = machine === 'to-break' ? 'marking it broken without knowing could leave it Broken, so it is left alone' : 'so it is not sent';
    return `fix-macs could not tell whether MAAS would accept commission (${preflight.reason}); ${risk}. Check MAAS's Images page, then run fix-macs again`;
  }
  if (preflight.verdict === 'refused') {
    const risk = machine === 'to-break' ? 'Marking it broken now would leave it Broken' : 'It stays Broken until then';
    return `${preflight.reason}. ${risk}. To finish: ${preflight.fix}`;
  }
  const arch = architecture?.split('/')[0];
  if (arch && !preflight.architectures.includes(arch)) {
    return `MAAS would accept commission, but no connected rack controller holds ${preflight.image} for ${arch} (only ${preflight.architectures.join(', ') || 'none'}), so the machine could not PXE-boot the commissioning environment. To finish: ${IMPORT_FIX}`;
  }
  return null;
}
