import type { Secret } from './secret.ts';

/** The names a config gives its MAAS regions, sites and clusters. */
export function configNames(config: { maas?: object; sites?: object; clusters?: object }): string[] {
  return [config.maas, config.sites, config.clusters].flatMap((group) => (group ? Object.keys(group) : []));
}

export type Redactor = (text: string) => string;

const MASK = '[redacted]';

/** A shape of secret we redact even when the config does not know the value. */
interface SecretShape {
  pattern: RegExp;
  /** What replaces a match; default the mask alone. Keeps the label ("token: ", "://user:") readable. */
  replace?: (match: string, ...groups: string[]) => string;
}

const keepLabel = (_m: string, label: string, glue: string) => `${label}${glue}${MASK}`;

/*
 * Every shape below is entered once per run of the characters it starts with: a lookbehind says
 * "not inside such a run" where `\b` would let `a.a.a…` restart it at every dot and rescan the rest
 * of the run each time (quadratic: 150 KB of that once stalled the bot for 50 s).
 */

/** Key names whose value is a credential, in YAML, JSON, env, headers or query strings. */
const SECRET_KEY =
  '(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|passphrase|power_pass|api[_-]?key|apikey|private[_-]?key|client-key-data|credentials?|auth[_-]?key)';

const SECRET_SHAPES: SecretShape[] = [
  // PEM and OpenSSH private keys, also cut short (an error message may quote only the start).
  { pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g },
  // Slack tokens: bot, user, app, config, refresh, session (xoxb- xoxp- xoxa- xoxo- xoxs- xoxr- xoxe- xoxc- xoxd- xapp-).
  { pattern: /\bxox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{8,}/g },
  { pattern: /\bxapp-[A-Za-z0-9-]{8,}/g },
  // JSON web tokens (Kubernetes service-account tokens, OIDC id-tokens).
  { pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/g },
  // A MAAS API key: consumer_key:token_key:token_secret.
  { pattern: /\b[A-Za-z0-9]{12,}:[A-Za-z0-9]{12,}:[A-Za-z0-9]{16,}\b/g },
  // Credentials in a URL: scheme://user:password@host (redis://:password@host too).
  {
    pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*)(:)[^\s/?#@]+@/gi,
    replace: (_m, before: string, colon: string) => `${before}${colon}${MASK}@`,
  },
  // HTTP authorization schemes; the credential holds a digit or base64 padding, so prose ("basic checks") stays.
  { pattern: /\b(Bearer|Basic)(\s+)(?=[A-Za-z._~-]*[0-9+/=])[A-Za-z0-9._~+/=-]{8,}/gi, replace: keepLabel },
  // OAuth 1.0 parameters as MAAS's header or a form carries them.
  { pattern: /\b(oauth_signature|oauth_token|oauth_consumer_key|token_secret)(=\s*"?)[^",&\s]+/gi, replace: keepLabel },
  // "key": "value" and key: 'value' for credential-named keys: the whole quoted value, however short or punctuated.
  {
    pattern: new RegExp(`(${SECRET_KEY})(["']?\\s*[:=]\\s*)(["'])(?!\\[redacted)(?:\\\\.|(?!\\3)[^\\\\\\r\\n])+\\3`, 'gi'),
    replace: (_m, label: string, glue: string, quote: string) => `${label}${glue}${quote}${MASK}${quote}`,
  },
  // The same inside a JSON string (a log line quoting MAAS's body): \"key\":\"value\".
  {
    pattern: new RegExp(`(${SECRET_KEY})(\\\\"\\s*:\\s*\\\\")(?!\\[redacted)(?:(?!\\\\")[^\\r\\n])+(?=\\\\")`, 'gi'),
    replace: keepLabel,
  },
  // key: value, key=value unquoted: the rest of the line up to a field separator (&, a quote, a brace, a backslash).
  { pattern: new RegExp(`(${SECRET_KEY})(\\s*[:=][ \\t]*)(?!\\[redacted|["'\\s\\\\])[^\\r\\n&"'}\\\\]+`, 'gi'), replace: keepLabel },
];

/**
 * Characters that make a reader see something other than what is there: bidi overrides and
 * isolates, zero-width characters, and terminal control (carriage return, escape sequences).
 * Tabs and newlines stay. They arrive in MAAS data (hostnames, power_id) and SSH stderr.
 */
// eslint-disable-next-line no-control-regex
const DECEPTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

function showEscaped(c: string): string {
  return `\\u{${c.codePointAt(0)!.toString(16)}}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Strings shorter than this are too common to redact without mangling text. */
const MIN_SECRET_LENGTH = 6;

const ELLIPSIS = '…';

export function secretFragments(secret: Secret): string[] {
  const value = secret.reveal();
  const parts = new Set<string>([value.trim()]);
  for (const line of value.split(/\r?\n/)) parts.add(line.trim());
  for (const piece of value.split(':')) parts.add(piece.trim());
  return [...parts].filter((p) => p.length >= MIN_SECRET_LENGTH);
}

/**
 * A known secret also travels escaped: inside JSON (a log line, job data), percent-encoded
 * (an OAuth header, a URL), base64-encoded (a kubeconfig's *-data fields, a Basic header) or
 * escaped for Slack's mrkdwn (`&amp;`, `&lt;`, `&gt;`).
 */
function encodings(secret: string): string[] {
  const mrkdwn = secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const out = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), mrkdwn];
  if (secret.length >= 12) out.push(Buffer.from(secret).toString('base64').replace(/=+$/, ''));
  return out;
}

export interface RedactorOptions {
  /**
   * The config's own names (sites, clusters, MAAS regions). A name that reads like a credential
   * key (`prod-badtoken`) is a name: `prod-badtoken: could not check` keeps its words.
   */
  names?: Iterable<string>;
}

const CREDENTIAL_WORD = new RegExp(SECRET_KEY, 'i');
/** Marks a configured name while the shapes run; a private-use character, shown escaped if it arrives in text. */
const NAME_MARK = '\uE001';

/**
 * One pass for every outgoing text: the config's secret values (and their escaped forms, and
 * their heads where a clip cut them short before an ellipsis), then anything shaped like a
 * credential; deceptive characters are shown as `\\u{…}` escapes.
 */
/** The secret values to redact: a fixed list, or a function whose answer grows as deferred secrets are read. */
export type SecretValues = Iterable<string> | (() => readonly string[]);

export function createRedactor(secrets: SecretValues, options: RedactorOptions = {}): Redactor {
  const names = [...new Set(options.names ?? [])].filter((n) => CREDENTIAL_WORD.test(n)).sort((a, b) => b.length - a.length);
  const namePattern = names.length ? new RegExp(`(?<![A-Za-z0-9_.-])(?:${names.map(escapeRegExp).join('|')})(?![A-Za-z0-9_.-])`, 'g') : null;
  const knownSecrets = knownSecretsOf(secrets);
  return (whole: string) => {
    const text = capForScanning(whole);
    const { knownPattern, heads } = knownSecrets();
    let out = knownPattern ? text.replace(knownPattern, MASK) : text;
    out = redactCutSecrets(out, heads);
    const held: string[] = [];
    if (namePattern) {
      out = out.replaceAll(NAME_MARK, showEscaped(NAME_MARK)).replace(namePattern, (name) => `${NAME_MARK}${held.push(name) - 1}${NAME_MARK}`);
    }
    for (const shape of SECRET_SHAPES) {
      const replace = shape.replace;
      out = replace ? out.replace(shape.pattern, (m, ...g: unknown[]) => replace(m, ...(g as string[]))) : out.replace(shape.pattern, MASK);
    }
    if (held.length) out = out.replace(/\uE001(\d+)\uE001/g, (_m, i: string) => held[Number(i)] ?? '');
    return out.replace(DECEPTIVE, showEscaped);
  };
}

interface KnownSecrets {
  knownPattern: RegExp | null;
  heads: SecretHeads;
}

/** Where a known secret clipped before an ellipsis may start: its first MIN_SECRET_LENGTH characters. */
interface SecretHeads {
  byAnchor: Map<string, string[]>;
  longest: number;
  /** Some secret holds an ellipsis itself, so a head may reach back past an earlier one. */
  spansEllipsis: boolean;
}

function secretHeads(known: readonly string[]): SecretHeads {
  const byAnchor = new Map<string, string[]>();
  let longest = 0;
  for (const secret of known) {
    const anchor = secret.slice(0, MIN_SECRET_LENGTH);
    const same = byAnchor.get(anchor);
    if (same) same.push(secret);
    else byAnchor.set(anchor, [secret]);
    longest = Math.max(longest, secret.length);
  }
  return { byAnchor, longest, spansEllipsis: known.some((s) => s.includes(ELLIPSIS)) };
}

/** The known values and their pattern, compiled again only when a live list has grown. */
function knownSecretsOf(secrets: SecretValues): () => KnownSecrets {
  const compile = (values: Iterable<string>): KnownSecrets => {
    const known = [...new Set([...values].filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap(encodings))]
      .filter((s) => s.length >= MIN_SECRET_LENGTH)
      .sort((a, b) => b.length - a.length);
    return { knownPattern: known.length ? new RegExp(known.map(escapeRegExp).join('|'), 'g') : null, heads: secretHeads(known) };
  };
  if (typeof secrets !== 'function') {
    const fixed = compile(secrets);
    return () => fixed;
  }
  let seen = -1;
  let current: KnownSecrets = compile([]);
  return () => {
    const values = secrets();
    if (values.length !== seen) {
      current = compile(values);
      seen = values.length;
    }
    return current;
  };
}

/**
 * The most of one text the redactor reads: outside text (a MAAS body, an SSH reply, a hostname) can
 * be any size, and nothing shown to a person needs more. The rest is cut before any pattern runs.
 */
export const MAX_SCANNED_CHARS = 2 * 1024 * 1024;

function capForScanning(text: string): string {
  if (text.length <= MAX_SCANNED_CHARS) return text;
  return `${text.slice(0, MAX_SCANNED_CHARS)}${ELLIPSIS} [${text.length - MAX_SCANNED_CHARS} more characters not shown]`;
}

/**
 * A known secret clipped short for a message (`abcd1234…`) is still the head of a secret. A head
 * starts after the previous ellipsis (unless a secret holds one), so each character is looked at
 * for one ellipsis only: 2 MiB of `…` with a 4096-bit key configured took 13 s when every
 * ellipsis looked back the length of every secret.
 */
function redactCutSecrets(text: string, heads: SecretHeads): string {
  if (!heads.byAnchor.size || !text.includes(ELLIPSIS)) return text;
  const parts: string[] = [];
  let kept = 0;
  let afterPrevious = 0;
  for (let at = text.indexOf(ELLIPSIS); at !== -1; at = text.indexOf(ELLIPSIS, at + 1)) {
    const from = Math.max(kept, at - heads.longest, heads.spansEllipsis ? 0 : afterPrevious);
    const head = longestSecretHead(text, from, at, heads.byAnchor);
    if (head) {
      parts.push(text.slice(kept, at - head), MASK);
      kept = at;
    }
    afterPrevious = at + ELLIPSIS.length;
  }
  parts.push(text.slice(kept));
  return parts.join('');
}

/** How many characters of text[from, end) just before `end` are the start of a known secret (0 when fewer than MIN_SECRET_LENGTH): the earliest start is the longest head. */
function longestSecretHead(text: string, from: number, end: number, byAnchor: ReadonlyMap<string, readonly string[]>): number {
  for (let at = from; at <= end - MIN_SECRET_LENGTH; at++) {
    const secrets = byAnchor.get(text.slice(at, at + MIN_SECRET_LENGTH));
    if (!secrets) continue;
    const head = text.slice(at, end);
    if (secrets.some((secret) => secret.startsWith(head))) return end - at;
  }
  return 0;
}

/** Redacts every string inside a JSON-like value. */
export function redactDeep<T>(value: T, redact: Redactor): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, redact);
    return out as T;
  }
  return value;
}
