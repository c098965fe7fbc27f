import { isScanCheck, SCAN_CHECKS, scanTargetsFor } from '../src/edge/alerts/scan-checks.ts';
import { targetNames, unknownTargetText } from '../src/edge/alerts/alert-targets.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { channelMention } from '../src/core/mention.ts';

const USAGE = `Usage: /maas scan <site|cluster>|all [${Object.keys(SCAN_CHECKS).join('|')}]`;

/** `/maas scan <target>`: a scheduled scan, now; what it finds goes to the alert channel. */
export const scanCommand: CommandDefinition = {
  name: 'scan',
  usage: 'scan <site|cluster>|all [check]',
  summary: 'run the drift scan of a target now: alerts are posted, updated or resolved in the alert channel',
  run: async (ctx, args) => {
    const [name, check] = args;
    if (!name || args.length > 2) return { text: USAGE, visibility: 'ephemeral', usage: true };
    if (check !== undefined && !isScanCheck(check)) return { text: `/maas scan: "${check.slice(0, 40)}" is not a check. ${USAGE}`, visibility: 'ephemeral', usage: true };
    if (!targetNames(ctx.config, name).length) return { text: `/maas scan: ${unknownTargetText(ctx.config, name)}`, visibility: 'ephemeral' };
    const scans = scanTargetsFor(ctx.config, name, check);
    if (!scans.length) {
      return { text: `/maas scan: nothing to scan on ${name}${check ? ` with ${check}` : ''} (a site needs rack: for resolver-check and vmHosts: for mac-diff).`, visibility: 'ephemeral' };
    }
    for (const scan of scans) await ctx.enqueue('scan', { check: scan.check, target: scan.target, requestedBy: ctx.user });
    const channel = ctx.config.slack.alertChannel;
    const where = channel ? `posted or updated in ${channelMention(channel)}` : 'tracked; see `/maas alerts` (no alert channel is configured)';
    const list = scans.map((s) => `${s.check} ${s.target}`).join(', ');
    return { text: `Scanning ${list}: anything found is ${where}.`, visibility: 'ephemeral' };
  },
};
