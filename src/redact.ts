import type { Secret } from './secret.ts';

export type Redactor = (text: string) => string;

const MASK = '[redacted]';

/** Shapes of secrets we redact even when the config does not know the value. */
const SECRET_SHAPES: RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
  /\bxapp-[A-Za-z0-9-]{8,}/g,
  /\b[A-Za-z0-9]{16,}:[A-Za-z0-9]{16,}:[A-Za-z0-9]{16,}\b/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(oauth_signature|oauth_token|token_secret)=("?)[^",&\s]+/gi,
  /\b(token|client-key-data|client-certificate-data|password|secret)(["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=-]{8,}/gi,
];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Strings shorter than this are too common to redact without mangling text. */
const MIN_SECRET_LENGTH = 6;

export function secretFragments(secret: Secret): string[] {
  const value = secret.reveal();
  const parts = new Set<string>([value.trim()]);
  for (const line of value.split(/\r?\n/)) parts.add(line.trim());
  for (const piece of value.split(':')) parts.add(piece.trim());
  return [...parts].filter((p) => p.length >= MIN_SECRET_LENGTH);
}

export function createRedactor(secrets: Iterable<string>): Redactor {
  const known = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  const knownPattern = known.length ? new RegExp(known.map(escapeRegExp).join('|'), 'g') : null;
  return (text: string) => {
    let out = knownPattern ? text.replace(knownPattern, MASK) : text;
    for (const shape of SECRET_SHAPES) {
      out = out.replace(shape, (match, ...groups) => {
        if (shape.source.startsWith('\\b(token|') || shape.source.startsWith('\\b(oauth_')) {
          return `${groups[0]}${groups[1]}${MASK}`;
        }
        return MASK;
      });
    }
    return out;
  };
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
