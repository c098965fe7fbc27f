import { describe, expect, it } from 'vitest';
import { controllerReleaseOf, controllerVersionOf, isFixedControllerVersion, isVulnerableControllerVersion } from '../../../src/features/dns/controller-version.ts';

const REPO = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller';

describe('controller image versions', () => {
  it.each([
    { image: `${REPO}:v4.8.3-spectro`, version: 'v4.8.3', vulnerable: true, fixed: false },
    { image: `${REPO}:v0.6.1-spectro-4.8.0`, version: 'v4.8.0', vulnerable: true, fixed: false },
    { image: `${REPO}:v0.6.1-spectro-4.8.11`, version: 'v4.8.11', vulnerable: true, fixed: false },
    { image: `${REPO}:v0.6.1-spectro-4.8.3-dev-12112025`, version: 'v4.8.3', vulnerable: true, fixed: false },
    { image: `${REPO}:v4.9.0-spectro`, version: 'v4.9.0', vulnerable: true, fixed: false },
    { image: `${REPO}:v4.9.1-spectro`, version: 'v4.9.1', vulnerable: true, fixed: false },
    { image: `${REPO}:v4.9.2-spectro`, version: 'v4.9.2', vulnerable: false, fixed: true },
    { image: `${REPO}:4.10.0`, version: 'v4.10.0', vulnerable: false, fixed: true },
    { image: `${REPO}:v4.7.18-spectro`, version: 'v4.7.18', vulnerable: false, fixed: false },
    { image: `registry.local:5000/capmaas/${'cluster-api-provider-maas-controller'}:v4.9.1-spectro`, version: 'v4.9.1', vulnerable: true, fixed: false },
  ])('$image → $version', ({ image, version, vulnerable, fixed }) => {
    const v = controllerVersionOf(image);
    expect(v?.text).toBe(version);
    expect(v && isVulnerableControllerVersion(v)).toBe(vulnerable);
    expect(v && isFixedControllerVersion(v)).toBe(fixed);
  });

  it.each([`${REPO}:latest`, `${REPO}`, `${REPO}@sha256:${'a'.repeat(64)}`, `${REPO}:v0.6.1`, 'registry.local:5000/capmaas'])(
    'says nothing about %s',
    (image) => {
      expect(controllerVersionOf(image)).toBeNull();
    },
  );

  // Lines from spectrocloud/cluster-api-provider-maas controllers/maascluster_controller.go at each tag:
  // no last-applied-dns-hash before v4.8.0-spectro; the early return without the guard in
  // v4.8.0-spectro..v4.9.1-spectro; the guard and the MAAS drift check from v4.9.2-spectro.
  it.each([
    { image: `${REPO}:v0.6.1`, line: 'no-hash-cache', version: 'v0.6.1', upstream: true },
    { image: `us-east1-docker.pkg.dev/spectro-images/cluster-api/cluster-api-provider-maas-controller:v0.9.0`, line: 'no-hash-cache', version: 'v0.9.0', upstream: true },
    { image: `${REPO}:v1.9.4`, line: 'no-hash-cache', version: 'v1.9.4', upstream: true },
    { image: `${REPO}:v0.2.0-spectro-4.0.0`, line: 'no-hash-cache', version: 'v4.0.0', upstream: false },
    { image: `${REPO}:v4.7.18-spectro`, line: 'no-hash-cache', version: 'v4.7.18', upstream: false },
    { image: `${REPO}:v0.6.1-spectro-4.8.0`, line: 'unguarded-hash-cache', version: 'v4.8.0', upstream: false },
    { image: `${REPO}:v4.9.1-spectro`, line: 'unguarded-hash-cache', version: 'v4.9.1', upstream: false },
    { image: `${REPO}:v4.9.2-spectro`, line: 'guarded-hash-cache', version: 'v4.9.2', upstream: false },
    { image: `${REPO}:v0.6.1-spectro-4.9.5`, line: 'guarded-hash-cache', version: 'v4.9.5', upstream: false },
  ])('$image is on the $line line', ({ image, line, version, upstream }) => {
    expect(controllerReleaseOf(image)).toEqual({ line, version, upstream });
  });

  it.each([`${REPO}:latest`, `${REPO}:v0.6.1-spectro-storage-overcommit-prevention-20260506`, `${REPO}:dev`, `${REPO}@sha256:${'a'.repeat(64)}`])('names no line for %s', (image) => {
    expect(controllerReleaseOf(image)).toBeNull();
  });
});
