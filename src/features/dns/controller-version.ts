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

/**
 * How a controller release keeps the API record (spectrocloud/cluster-api-provider-maas,
 * controllers/maascluster_controller.go reconcileDNSAttachments):
 *  - `no-hash-cache`: v0.x and v1.x upstream, Palette v4.0–v4.7 (v4.7.18-spectro). No
 *    last-applied-dns-hash; every reconcile PUTs the running set, so the record is empty while
 *    no control-plane machine runs and fills again on the reconcile a MaasMachine change triggers.
 *  - `unguarded-hash-cache`: v4.8.0–v4.9.1. Returns early when the desired set's hash equals the
 *    annotation, and PUTs and caches the empty set when none runs: the wipe sticks (PCP-6608).
 *  - `guarded-hash-cache`: v4.9.2 and later. Keeps the records while a control-plane machine
 *    exists but none runs, and re-checks MAAS when the hash matches: the failure becomes stale
 *    records, kept until a control-plane machine runs again.
 */
export type ControllerLine = 'no-hash-cache' | 'unguarded-hash-cache' | 'guarded-hash-cache';

export interface ControllerRelease {
  line: ControllerLine;
  /** `v4.8.3` for a Palette release, `v0.6.1` for an upstream one. */
  version: string;
  upstream: boolean;
}

/** The release line an image tag names, or null when the tag says nothing we can trust. */
export function controllerReleaseOf(image: string): ControllerRelease | null {
  const palette = controllerVersionOf(image);
  if (palette) return { line: paletteLine(palette), version: palette.text, upstream: false };
  const tag = imageTag(image);
  const spectro = tag ? /-spectro-v?(\d+)\.(\d+)\.(\d+)/.exec(tag) ?? /^v?(\d+)\.(\d+)\.(\d+)-spectro/.exec(tag) : null;
  // Palette builds of v4.0–v4.7 carry the upstream base in front (v0.2.0-spectro-4.0.0).
  if (spectro) return null;
  // Upstream images are tagged with the bare release (Makefile IMG_TAG ?= v0.9.0).
  const upstream = tag ? /^v(\d+)\.(\d+)\.(\d+)$/.exec(tag) : null;
  if (!upstream || Number(upstream[1]) >= 4) return null;
  return { line: 'no-hash-cache', version: `v${upstream[1]}.${upstream[2]}.${upstream[3]}`, upstream: true };
}

function paletteLine(v: ControllerVersion): ControllerLine {
  if (isFixedControllerVersion(v)) return 'guarded-hash-cache';
  if (isVulnerableControllerVersion(v)) return 'unguarded-hash-cache';
  return 'no-hash-cache';
}
