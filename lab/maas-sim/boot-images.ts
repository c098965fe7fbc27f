/**
 * What tells whether `commission` can start, as canonical/maas 3.4 serves it: the commissioning
 * release (`GET maas/?op=get_config`, api/maas.py) and each rack's boot images
 * (`GET rackcontrollers/<id>/?op=list_boot_images`, api/rackcontrollers.py → models/node.py
 * RackController.list_boot_images). The rule they feed is commissioningImageMissing in machines.ts.
 */
import { commissioningRelease } from './machines.ts';
import { adminOnly, invalid, isAdmin, notFound, ok, text, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

/** The config names the simulator answers; MAAS has many more (forms/settings.py CONFIG_ITEMS). */
const CONFIG_NAMES = ['commissioning_osystem', 'commissioning_distro_series'];

/** api/maas.py get_config: any authenticated user; the value as JSON; an unknown name is a field error. */
export function getConfig(ctx: SimContext, req: SimRequest): SimResponse {
  const name = req.query.get('name');
  // api/utils.py get_mandatory_param: MAASAPIValidationError("No provided name!").
  if (!name) return text(400, 'No provided name!');
  const release = commissioningRelease(ctx);
  if (name === 'commissioning_osystem') return ok(release.osystem);
  if (name === 'commissioning_distro_series') return ok(release.release);
  // forms/settings.py validate_config_name (INVALID_SETTING_MSG_TEMPLATE, here with the names the simulator knows).
  return invalid({ [name]: [`${name} is not a valid config setting (valid settings are: ${CONFIG_NAMES.join(', ')}).`] });
}

/**
 * `@admin_method` (403 for others); 404 for an unknown rack. One entry per name and architecture
 * with its subarches; a rack the region cannot reach answers `{images: [], connected: false,
 * status: "unknown"}` instead of an error. A reachable rack's status is `synced` here
 * (get_image_sync_status: also `syncing`, `out-of-sync`, `region-importing`).
 */
export function listBootImages(ctx: SimContext, systemId: string): SimResponse {
  if (!isAdmin(ctx)) return adminOnly();
  const rack = ctx.state.rackControllers.find((r) => r.system_id === systemId);
  if (!rack) return notFound('RackController');
  if (rack.connected === false) return ok({ images: [], connected: false, status: 'unknown' });
  const images = (rack.bootImages ?? []).map((i) => ({ name: i.name, architecture: i.architecture, subarches: [...i.subarches].sort() }));
  return ok({ images, connected: true, status: 'synced' });
}
