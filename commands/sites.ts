import { sitesOverview, sitesText } from '../src/edge/terminal/sites.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';

export const sitesCommand: CommandDefinition = {
  name: 'sites',
  usage: 'sites',
  summary: 'the configured MAAS regions, sites and clusters',
  run: async (ctx) => ({ text: sitesText(sitesOverview(ctx.config)), visibility: 'ephemeral' }),
};
