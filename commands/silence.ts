import type { Silence } from '../src/edge/alerts/alert-record.ts';
import { formatDuration, parseDuration } from '../src/core/duration.ts';
import { targetNames, unknownTargetText } from '../src/edge/alerts/alert-targets.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { mention } from '../src/core/mention.ts';

const USAGE = 'Usage: /maas silence <site|cluster|all> <duration>|off   (durations: 30m, 2h, 1d)';
/** A silence longer than this is more likely forgotten than meant. */
const MAX_SILENCE_MS = 7 * 24 * 3600_000;

/** `/maas silence <target> <duration>`: mutes a target's alerts; who and until when is recorded. */
export const silenceCommand: CommandDefinition = {
  name: 'silence',
  usage: 'silence <site|cluster|all> <duration>|off',
  summary: "mute a target's drift alerts for a while (30m, 2h, 1d), or lift it with off",
  run: async (ctx, args) => {
    const [name, span] = args;
    if (!name || !span || args.length > 2) return { text: USAGE, visibility: 'ephemeral', usage: true };
    const targets = targetNames(ctx.config, name);
    if (!targets.length) return { text: `/maas silence: ${unknownTargetText(ctx.config, name)}`, visibility: 'ephemeral' };
    if (!ctx.alerts) return { text: '/maas silence: alert state is not available in this process (no Redis). Ask whoever runs the bot.', visibility: 'ephemeral' };
    const store = ctx.alerts;
    const what = name === 'all' ? 'every target' : name;

    if (span.toLowerCase() === 'off') {
      const lifted = (await Promise.all(targets.map((t) => store.unsilence(t)))).filter(Boolean).length;
      const text = lifted ? `${mention(ctx.user)} lifted the silence on ${what}: its alerts are posted again.` : `${what} was not silenced.`;
      return { text, visibility: lifted ? 'in_channel' : 'ephemeral' };
    }
    const ms = parseDuration(span);
    if (ms === null) return { text: `/maas silence: "${span.slice(0, 20)}" is not a duration. ${USAGE}`, visibility: 'ephemeral', usage: true };
    if (ms > MAX_SILENCE_MS) return { text: `/maas silence: at most ${formatDuration(MAX_SILENCE_MS)}; silence again when it runs out if you still need it.`, visibility: 'ephemeral' };

    const at = Date.now();
    const until = at + ms;
    await Promise.all(targets.map((target) => store.silence({ target, by: ctx.user, at, until } satisfies Silence)));
    return {
      text:
        `${mention(ctx.user)} silenced ${what} for ${formatDuration(ms)} (until ${new Date(until).toISOString().slice(0, 16).replace('T', ' ')} UTC). ` +
        'New alerts about it are tracked but not posted and their threads stay quiet; open alert messages still update in place. ' +
        `\`/maas silence ${name} off\` lifts it.`,
      visibility: 'in_channel',
    };
  },
};
