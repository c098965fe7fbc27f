/**
 * The baseline of the streamed reads: `machines/` and the bulk `power_parameters` read as the client
 * did before, the whole body held as one string and then parsed whole (every field kept). Every
 * other call goes to the real client.
 */
import { request } from 'undici';
import type { MaasRegionConfig } from '../../src/core/config.ts';
import { machineFilterQuery } from '../../src/adapters/maas/client.ts';
import { readCappedBody } from '../../src/adapters/maas/capped-body.ts';
import { maasOAuthHeader } from '../../src/adapters/maas/oauth-header.ts';
import { withoutSecretFields } from '../../src/adapters/maas/secret-fields.ts';
import type { MaasClient, MaasMachine, PowerParameters } from '../../src/adapters/maas/types.ts';

const NO_CAP = 4096 * 1024 * 1024;

export function wholeBodyMaasClient(region: MaasRegionConfig, real: MaasClient, onAnswer: (bytes: number) => void): MaasClient {
  const base = `${region.url.replace(/\/+$/, '')}/api/2.0/`;
  async function getWhole<T>(path: string, query: [string, string][]): Promise<T> {
    const url = `${base}${path}${query.length ? `?${new URLSearchParams(query).toString()}` : ''}`;
    const response = await request(url, { headers: { authorization: maasOAuthHeader(region.apiKey.reveal(), { method: 'GET', url }), accept: 'application/json' } });
    const text = await readCappedBody(response, NO_CAP, () => new Error('body too large'));
    onAnswer(Buffer.byteLength(text));
    if (response.statusCode !== 200) throw new Error(`MAAS answered ${response.statusCode} to GET ${path}`);
    return withoutSecretFields(JSON.parse(text) as T);
  }
  return {
    ...real,
    listMachines: (filter = {}) => getWhole<MaasMachine[]>('machines/', machineFilterQuery(filter)),
    powerParameters: (ids) => getWhole<Record<string, PowerParameters>>('machines/', [['op', 'power_parameters'], ...(ids ?? []).map((id): [string, string] => ['id', id])]),
  };
}
