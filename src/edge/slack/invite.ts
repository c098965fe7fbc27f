/**
 * What a person types to let the bot into a channel: the bot user's display name is `maas`
 * (manifest.yml, `bot_user.display_name`). Shown in Slack and in the start-up log.
 */
export const INVITE_COMMAND = '/invite @maas';
