/**
 * `text` without a leading `lead` and the `: ` or space after it (`fix-macs site-b done: …` less
 * `fix-macs site-b` is `done: …`); undefined when `text` does not open with `lead` so, or nothing follows.
 */
export function withoutLead(text: string, lead: string): string | undefined {
  if (!lead || !text.startsWith(lead)) return undefined;
  const after = text.slice(lead.length);
  if (!/^:?\s/.test(after)) return undefined;
  return after.replace(/^:?\s+/, '') || undefined;
}
