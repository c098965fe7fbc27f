import { sitesOverview, sitesText } from '../src/sites.ts';
import type { CommandDefinition } from '../src/command-types.ts';

export const sitesCommand: CommandDefinition = {
  name: 'sites',
  usage: 'sites',
  summary: 'the configured MAAS regions, sites and clusters',
  run: async (ctx) => ({ text: sitesText(sitesOverview(ctx.config)), visibility: 'ephemeral' }),
};
