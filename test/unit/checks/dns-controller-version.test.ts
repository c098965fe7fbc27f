import { describe, expect, it } from 'vitest';
import { controllerVersionOf, isFixedControllerVersion, isVulnerableControllerVersion } from '../../../src/features/dns/controller-version.ts';

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
});
