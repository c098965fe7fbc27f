import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/config.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { describeRedis, redisSecrets, redisSettingsFrom } from '../../src/engine/queue/redis-settings.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const files: Record<string, string> = { '/etc/redis-ca.pem': PEM, '/etc/not-a-cert': 'hello' };
const readFile = (p: string) => {
  const text = files[p];
  if (text === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  return text;
};
const settings = (env: NodeJS.ProcessEnv) => redisSettingsFrom(env, undefined, readFile).settings;

describe('Redis settings from the environment', () => {
  it('defaults to the local Redis', () => {
    expect(settings({})).toEqual({ mode: 'url', url: 'redis://127.0.0.1:6379' });
  });

  it('takes rediss:// with a CA file, and an ACL user in the URL', () => {
    const s = settings({ REDIS_URL: 'rediss://bot:s3cr%2Ft@redis.example:6380/2', REDIS_TLS_CA: '/etc/redis-ca.pem' });
    expect(s).toMatchObject({ mode: 'url', url: 'rediss://bot:s3cr%2Ft@redis.example:6380/2', tlsCa: PEM });
    expect(redisSecrets(s)).toEqual(['s3cr/t']);
    expect(describeRedis(s)).toBe('rediss://redis.example:6380/2');
  });

  it('uses REDIS_USERNAME / REDIS_PASSWORD for a URL without credentials, never over the URL\'s own', () => {
    expect(settings({ REDIS_URL: 'redis://redis:6379', REDIS_USERNAME: 'bot', REDIS_PASSWORD: 'pw' })).toMatchObject({ username: 'bot', password: 'pw' });
    expect(settings({ REDIS_URL: 'redis://:inurl@redis:6379', REDIS_PASSWORD: 'other' })).not.toHaveProperty('password');
  });

  it('takes Sentinel: the sentinels, the primary\'s name, both logins', () => {
    const s = settings({
      REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379,[fd00::3]:26380',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_SENTINEL_USERNAME: 'sentinel-user',
      REDIS_SENTINEL_PASSWORD: 'spw',
      REDIS_USERNAME: 'maas-chatops',
      REDIS_PASSWORD: 'pw',
    });
    expect(s).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: 'fd00::3', port: 26380 },
      ],
      name: 'mymaster',
      sentinelUsername: 'sentinel-user',
      sentinelPassword: 'spw',
      username: 'maas-chatops',
      password: 'pw',
    });
    expect(redisSecrets(s).sort()).toEqual(['pw', 'spw']);
    expect(describeRedis(s)).toBe('Sentinel primary "mymaster" via 10.0.0.1:26379,10.0.0.2:26379,fd00::3:26380');
  });

  const bad: [string, NodeJS.ProcessEnv, RegExp][] = [
    ['a URL that is not one', { REDIS_URL: 'redis//:hunter2@x' }, /^REDIS_URL is not a URL\. Use redis:\/\//],
    ['another scheme', { REDIS_URL: 'http://redis:6379' }, /^REDIS_URL has the scheme "http:"\. Use redis:\/\/host:port/],
    ['a user without a password', { REDIS_URL: 'redis://bot@redis:6379' }, /^REDIS_URL has a user name but no password\. Use redis:\/\/user:password@host:port/],
    ['a path that is no database', { REDIS_URL: 'redis://redis:6379/queues' }, /^REDIS_URL has a path that is not a database number/],
    ['a CA with plain redis://', { REDIS_URL: 'redis://redis:6379', REDIS_TLS_CA: '/etc/redis-ca.pem' }, /^REDIS_TLS_CA is set but REDIS_URL starts with redis:\/\/\. Use rediss:\/\//],
    ['a CA file that is missing', { REDIS_URL: 'rediss://redis:6379', REDIS_TLS_CA: '/etc/nope.pem' }, /^REDIS_TLS_CA: cannot read \/etc\/nope\.pem \(ENOENT\)\. Point it at the PEM file of the CA/],
    ['a CA file that is no certificate', { REDIS_URL: 'rediss://redis:6379', REDIS_TLS_CA: '/etc/not-a-cert' }, /^REDIS_TLS_CA: \/etc\/not-a-cert holds no PEM certificate/],
    ['URL and sentinels', { REDIS_URL: 'redis://redis:6379', REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'm' }, /^REDIS_URL and REDIS_SENTINELS are both set\. Set REDIS_SENTINELS/],
    ['sentinels without a name', { REDIS_SENTINELS: 'a:26379' }, /^REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not\. Set REDIS_SENTINEL_NAME/],
    ['a name without sentinels', { REDIS_SENTINEL_NAME: 'm' }, /^REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not/],
    ['a sentinel without a port', { REDIS_SENTINELS: 'a:26379,b', REDIS_SENTINEL_NAME: 'm' }, /^REDIS_SENTINELS: "b" is not host:port\. Write REDIS_SENTINELS as host:port,host:port/],
    ['a port out of range', { REDIS_SENTINELS: 'a:70000', REDIS_SENTINEL_NAME: 'm' }, /^REDIS_SENTINELS: "a:70000" is not host:port/],
    ['a sentinel user without a password', { REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'm', REDIS_SENTINEL_USERNAME: 'u' }, /^REDIS_SENTINEL_USERNAME is set but REDIS_SENTINEL_PASSWORD is not/],
    ['a user without a password', { REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'm', REDIS_USERNAME: 'u' }, /^REDIS_USERNAME is set but REDIS_PASSWORD is not/],
  ];
  it.each(bad)('stops at start on %s, with one line naming the setting and the fix, and no secret', (_name, env, message) => {
    let thrown: unknown;
    try {
      settings(env);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const text = (thrown as ConfigError).describe();
    expect(text).toMatch(message);
    expect(text).not.toContain('\n');
    expect(text).not.toContain('hunter2');
  });
});

describe('the config file\'s redis: block', () => {
  const yaml = `
redis:
  sentinels: ["10.0.0.1:26379", "10.0.0.2:26379"]
  sentinelName: mymaster
  sentinelPassword: env:SENTINEL_PW
  username: maas-chatops
  password: env:BOT_REDIS_PW
  tlsCa: /etc/redis-ca.pem
`;
  const env = { SENTINEL_PW: 'spw-123456', BOT_REDIS_PW: 'rpw-123456' };

  it('configures Sentinel when the environment says nothing about Redis; its secrets are references', () => {
    const loaded = parseConfigText(yaml, { path: 'c.yaml', env });
    expect(loaded.secrets).toEqual(expect.arrayContaining(['spw-123456', 'rpw-123456']));
    expect(JSON.stringify(loaded.config)).not.toMatch(/spw-123456|rpw-123456/);
    const { settings: s, warnings } = redisSettingsFrom(env, loaded.config.redis, readFile);
    expect(warnings).toEqual([]);
    expect(s).toMatchObject({ mode: 'sentinel', name: 'mymaster', sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }], sentinelPassword: 'spw-123456', username: 'maas-chatops', password: 'rpw-123456', tlsCa: PEM });
  });

  it('is ignored, with a warning, when REDIS_URL or REDIS_SENTINELS is set: the environment wins', () => {
    const loaded = parseConfigText(yaml, { path: 'c.yaml', env });
    const { settings: s, warnings } = redisSettingsFrom({ ...env, REDIS_URL: 'redis://10.9.9.9:6379' }, loaded.config.redis, readFile);
    expect(s).toEqual({ mode: 'url', url: 'redis://10.9.9.9:6379' });
    expect(warnings).toEqual(["the config file's redis: block is ignored: REDIS_URL or REDIS_SENTINELS is set, and the environment wins"]);
  });

  it('refuses a sentinel that is not host:port, naming the key', () => {
    expect(() => parseConfigText('redis:\n  sentinels: ["10.0.0.1"]\n  sentinelName: m\n', { path: 'c.yaml', env: {} })).toThrow(/c\.yaml: redis\.sentinels\.0: must be host:port/);
  });
});
