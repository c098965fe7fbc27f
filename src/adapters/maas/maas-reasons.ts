/*
 * The plain-text reasons MAAS gives with an error status. MAAS's API exceptions answer with their
 * message as text/plain (maasserver/exceptions.py, MAASAPIException.make_http_response); the OAuth
 * layer answers `Authorization Error: …` (maasserver/api/auth.py, piston3 OAuthError). A text body
 * is otherwise outside text of unknown shape (a proxy page, a driver message quoting a BMC
 * password): only a body that is exactly one of these reasons is shown, each part it quotes held to
 * the characters that part can hold. The labels are rows of the recorded MAAS 3.4.10 answers.
 */

interface KnownReason {
  /** The whole body, anchored. */
  pattern: RegExp;
  /** What is shown of it; default the body as it came. */
  shown?: string;
}

const KNOWN_REASONS: readonly KnownReason[] = [
  // whoami (anonymous), whoami-badkey, replay-2-same-nonce, old-timestamp
  { pattern: /^Forbidden$/ },
  { pattern: /^Authorization Error: Invalid API key\.$/ },
  { pattern: /^Authorization Error: 'Nonce already used: [A-Za-z0-9]{1,64}'$/ },
  { pattern: /^Authorization Error: 'Expired timestamp: given \d{1,12} and now \d{1,12} has a greater difference than threshold \d{1,6}'$/ },
  // wrong-secret: the expected signature base string holds the token secret, so only the reason shows.
  { pattern: /^Authorization Error: 'Invalid signature\.[^\r\n]{0,300}'$/, shown: "Authorization Error: 'Invalid signature.'" },
  // invalid-token: MAAS echoes the token key it was sent.
  { pattern: /^Authorization Error: 'Invalid access token: [^'\r\n]{0,100}'$/, shown: "Authorization Error: 'Invalid access token: [redacted]'" },
  { pattern: /^Authorization Error: 'Signature method [A-Z0-9-]{1,20} not supported try one of the following: [A-Z0-9, -]{1,60}'$/ },
  // unknown-op, machines-anon, unknown-path, dns-fqdn-unknown-domain, power_parameters-bulk
  { pattern: /^Unrecognised signature: method=[A-Z]{3,7} op=[A-Za-z_]{1,40}$/ },
  { pattern: /^Unknown API endpoint: [A-Za-z0-9/_.%-]{1,300}\.$/ },
  { pattern: /^No [A-Za-z]{1,40} matches the given query\.$/ },
  { pattern: /^This method is reserved for admin users\.$/ },
  { pattern: /^(?:Not Found|Method Not Allowed)$/ },
  // dns-put-comma, dns-put-bad-ip: the value quoted is the one the bot sent.
  { pattern: /^failed to detect a valid IP address from '[A-Za-z0-9.:, _-]{0,200}'$/ },
  // iface-mac[p-failcomm], locked-lock-again, unlocked-unlock-again, lock-ready, mark_fixed-not-broken
  { pattern: /^Cannot [a-z ]{1,40} because the machine is not [A-Za-z, ]{1,80}\.$/ },
  { pattern: /^Machine is (?:already locked|not locked)$/ },
  { pattern: /^Can't lock, node is not deployed or deploying$/ },
  { pattern: /^Can't mark a non-broken node as 'Ready'\.$/ },
  // commission-from-broken, iprange-put-nonadmin-unowned
  { pattern: /^Ephemeral operating system [a-z0-9-]{1,40} [a-z0-9.-]{1,40} is unavailable\.$/ },
  { pattern: /^Unable to modify IP range\. You don't own the IP range\.$/ },
  // events-limit-1001, events-bad-level, events-before-after
  { pattern: /^Requested number of events \d{1,9} is greater than limit: \d{1,9}$/ },
  { pattern: /^Unrecognised log level: [A-Z]{1,20}$/ },
  { pattern: /^There is undetermined behaviour when both `after` and `before` are specified\.$/ },
  { pattern: /^Please enter an integer value$/ },
  // mark_broken-owner-poweredon[p-deployed-op2], mark_broken-owner-poweredon[p-allocated]
  { pattern: /^No rack controllers can access the BMC of node [A-Za-z0-9-]{1,63}$/ },
  { pattern: /^'NoneType' object has no attribute '[A-Za-z_]{1,60}'$/ },
];

/** The longest text body compared with the reasons: every known one is far shorter. */
const MAX_REASON_CHARS = 400;

/** MAAS's reason as it may be shown, or undefined when the body is not one the bot knows. */
export function knownMaasReason(body: string): string | undefined {
  const text = body.trim();
  if (text.length > MAX_REASON_CHARS) return undefined;
  const known = KNOWN_REASONS.find((r) => r.pattern.test(text));
  return known ? (known.shown ?? text) : undefined;
}
