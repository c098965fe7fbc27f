/**
 * Which cluster-api-provider-maas releases cache the DNS hash without the PCP-6608 guard.
 * Git tags are `v4.8.3-spectro`; release images are tagged `v0.6.1-spectro-4.8.3` (Makefile
 * IMG_TAG = v0.6.1-spectro-${SPECTRO_VERSION}) or with the bare release version.
 */

export interface ControllerVersion {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

export const FIXED_CONTROLLER_VERSION = 'v4.9.2';
export const VULNERABLE_CONTROLLER_RANGES = ['v4.8.0–v4.8.11', 'v4.9.0–v4.9.1'];

/** The release version an image tag names, or null when the tag says nothing we can trust. */
export function controllerVersionOf(image: string): ControllerVersion | null {
  const tag = imageTag(image);
  if (!tag) return null;
  const patterns = [
    /-spectro-v?(\d+)\.(\d+)\.(\d+)/, // v0.6.1-spectro-4.8.3[-dev-…]
    /^v?(\d+)\.(\d+)\.(\d+)-spectro/, // v4.8.3-spectro
    /^v?(\d+)\.(\d+)\.(\d+)$/, // 4.8.3
  ];
  for (const pattern of patterns) {
    const m = pattern.exec(tag);
    if (!m) continue;
    const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
    // Upstream CAPMAAS versions (v0.x) are not Palette releases: nothing to compare.
    if (major < 4) return null;
    return { major, minor, patch, text: `v${major}.${minor}.${patch}` };
  }
  return null;
}

/** v4.8.0–v4.8.11 and v4.9.0–v4.9.1: the hash early-return without the empty-set guard. */
export function isVulnerableControllerVersion(v: ControllerVersion): boolean {
  if (v.major !== 4) return false;
  if (v.minor === 8) return v.patch <= 11;
  if (v.minor === 9) return v.patch <= 1;
  return false;
}

/** Releases with the guard and the MAAS drift check. */
export function isFixedControllerVersion(v: ControllerVersion): boolean {
  return v.major > 4 || (v.major === 4 && (v.minor > 9 || (v.minor === 9 && v.patch >= 2)));
}

function imageTag(image: string): string | null {
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSegment = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  return colon < 0 ? null : lastSegment.slice(colon + 1);
}
