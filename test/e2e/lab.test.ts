import { describe, expect, it } from 'vitest';
import { runLab } from '../../src/lab/run-lab.ts';
import { TEST_REDIS_URL } from '../helpers/redis.ts';

describe('npm run lab', () => {
  it('prints the scripted conversation with every command answered', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runLab({ env: { REDIS_URL: TEST_REDIS_URL }, out: (s) => out.push(s), err: (s) => err.push(s) });
    const channel = out.join('\n');
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(channel).toContain('alice (on call): /maas help');
    expect(channel).toMatch(/maas-bot \(only visible to alice \(on call\)\):\n {2}Usage: \/maas <command>/);
    expect(channel).toContain('alice (on call): /maas sites');
    expect(channel).toMatch(/Clusters:\n\s+prod/);
    expect(channel).toContain('API record WIPED, empty-set hash cached');
    expect(channel).toContain('answers SERVFAIL for its own zone maas-internal');
    expect(channel).toContain('9 of 12 machines at site-b have drifted MACs');
    // site-b's Failed commissioning machine is commissioned again, followed in the thread, and ends Ready.
    expect(channel).toContain('site-b-node1: commissioning started (Broken → Commissioning); following it until Ready or failed');
    expect(channel).toMatch(/site-b-node1: ✅ mark-broken verified .* → ✅ set-mac verified .* → ✅ commission verified \(Broken → Commissioning → Ready in \d+s \(read back\): MAAS commissioned it\)/);
  });

  it('starts a private redis-server when REDIS_URL does not answer', async () => {
    const out: string[] = [];
    const code = await runLab({ env: { REDIS_URL: 'redis://127.0.0.1:1', PATH: process.env.PATH }, out: (s) => out.push(s), err: () => undefined });
    expect(code).toBe(0);
    expect(out[0]).toMatch(/Redis redis:\/\/127\.0\.0\.1:(?!1,)\d+/);
    expect(out.join('\n')).toContain('9 of 12 machines at site-b have drifted MACs');
  });

  it('says how to get Redis when none answers and none can be started', async () => {
    const err: string[] = [];
    const code = await runLab({ env: { REDIS_URL: 'redis://127.0.0.1:1', PATH: '/nonexistent' }, out: () => undefined, err: (s) => err.push(s) });
    expect(code).toBe(2);
    expect(err).toEqual(['The lab needs Redis: install it (apt-get install redis-server) or set REDIS_URL to a running one.']);
  });
});
