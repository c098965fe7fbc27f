import { ChatopsError } from '../../core/errors.ts';
import { isRefusedSkew, MAAS_TIMESTAMP_THRESHOLD_S, readAuthRefusal, type AuthRefusal } from './auth-refusal.ts';
import { createRedactor } from '../../core/redact.ts';
import { knownMaasReason } from './maas-reasons.ts';
import { withoutSecretMessages } from './error-body-secrets.ts';

/** Longest MAAS message kept in an error; MAAS can answer with whole HTML pages. */
const MAX_BODY_CHARS = 500;

export interface MaasApiErrorDetails {
  region: string;
  status: number;
  /** MAAS's answer as text, already scrubbed of the API key. Ignored for a 401: see `auth`. */
  body: string;
  method: string;
  /** Relative to `<url>/api/2.0/`, with the query: `machines/abc/?op=mark_fixed`. */
  path: string;
  /** For a 401: what it means, in our words (MAAS's text is never kept). */
  auth?: AuthRefusal;
  /** How far MAAS's clock is from this host's (its Date header), in seconds; positive: MAAS ahead. */
  clockOffsetS?: number;
}

/** MAAS answered with an HTTP error status. Carries MAAS's own message (never for a 401); never the API key. */
export class MaasApiError extends ChatopsError {
  readonly status: number;
  readonly body: string;
  readonly method: string;
  readonly path: string;
  readonly region: string;
  readonly auth: AuthRefusal | undefined;
  readonly clockOffsetS: number | undefined;
  /**
   * A 4xx is MAAS refusing: the write took no effect. Not so for "Nonce already used": MAAS spends
   * a nonce only when a request succeeded, so an earlier copy of this one did its work.
   */
  readonly provesNoEffect: boolean;

  constructor(details: MaasApiErrorDetails) {
    const auth = details.status === 401 ? (details.auth ?? readAuthRefusal(details.body)) : undefined;
    const body = auth ? auth.text : shorten(details.body.trim());
    const said = body ? `: ${body}` : '';
    super('MAAS_HTTP', `MAAS ${details.region} answered ${details.status} to ${details.method} ${details.path}${said}`, {
      hint: hintFor(details.status, details.region, auth, details.clockOffsetS),
    });
    this.name = 'MaasApiError';
    this.status = details.status;
    this.body = body;
    this.method = details.method;
    this.path = details.path;
    this.region = details.region;
    this.auth = auth;
    this.clockOffsetS = details.clockOffsetS;
    this.provesNoEffect = details.status >= 400 && details.status < 500 && auth?.kind !== 'nonce-used';
  }
}

/** A 401 that is the clocks, not the key: MAAS's Date header, or its own refusal, says how far apart. */
export function isClockSkew(err: MaasApiError): boolean {
  return err.status === 401 && (err.auth?.kind === 'expired-timestamp' || isRefusedSkew(err.clockOffsetS));
}

function hintFor(status: number, region: string, auth: AuthRefusal | undefined, clockOffsetS: number | undefined): string {
  if (status === 401 && (auth?.kind === 'expired-timestamp' || isRefusedSkew(clockOffsetS))) {
    const apart = clockOffsetS === undefined ? '' : ` MAAS's clock is ${Math.abs(clockOffsetS)} s ${clockOffsetS > 0 ? 'ahead of' : 'behind'} this host's (read from its answer).`;
    return `Clock skew, not the API key: MAAS refuses OAuth timestamps more than ${MAAS_TIMESTAMP_THRESHOLD_S} s from its own clock.${apart} Fix the time (NTP) on this host or on the region`;
  }
  if (status === 401 && auth?.kind === 'nonce-used') {
    return 'A copy of this request reached MAAS before (a proxy or a retry resent it): whether it took effect is read from MAAS, not assumed';
  }
  return hintForStatus(status, region);
}

function shorten(text: string): string {
  return text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}…` : text;
}

function hintForStatus(status: number, region: string): string {
  if (status === 401) {
    return `Check maas.${region}.apiKey: it must be a current key (consumer_key:token_key:token_secret) from \`maas apikey --username=<user>\``;
  }
  if (status === 403) {
    return 'The MAAS user behind the API key may not do this: MAAS refuses admin-only calls to a non-admin key, mark_broken to anyone but the machine\'s owner, and every edit of a locked machine (op=unlock lifts it); see docs/maas-behaviour.md';
  }
  if (status === 404) return 'MAAS does not know it: check the name, or whether it was deleted';
  if (status === 409) return 'MAAS refused it in the machine\'s current state; wait for the machine to settle or change its state first';
  if (status === 400) return 'MAAS rejected the values sent; the message above says which';
  if (status >= 500) return 'MAAS failed on its side; try again shortly, and look at the region logs (regiond.log) if it persists';
  return 'See the MAAS message above';
}

const redactPatterns = createRedactor([]);

/** The most of an error body parsed as JSON; a longer one is not read at all. */
export const MAX_PARSED_ERROR_BODY_CHARS = 64 * 1024;

/**
 * The text an error body may show, decided before any of it is scanned: a JSON body (of at most
 * 64 KiB) is parsed, and each field that is a secret, whose messages name one, or that quotes one
 * of `submittedSecrets` shows a fixed sentence instead (error-body-secrets.ts); a text body
 * shows only when it is exactly one of MAAS's own reasons (maas-reasons.ts); anything else (an
 * HTML page, a proxy's text, a driver message quoting a BMC password) is a fixed sentence, never
 * an excerpt. What is shown then passes the pattern redactor and loses every part of the API key.
 */
export function describeMaasErrorBody(raw: string, apiKey: string, submittedSecrets: readonly string[] = []): string {
  const text = raw.trim();
  if (!text) return '';
  if (text.length > MAX_PARSED_ERROR_BODY_CHARS) return `(MAAS's answer is not shown: ${Math.ceil(text.length / 1024)} KiB, more than an error is read)`;
  const shown = jsonWithoutSecrets(text, submittedSecrets) ?? knownMaasReason(text);
  if (shown === undefined) return "(MAAS's answer is not shown: it is neither JSON nor one of MAAS's own reasons; the region's regiond.log has it)";
  return redactPatterns(scrubApiKey(shown, apiKey));
}

function jsonWithoutSecrets(text: string, submittedSecrets: readonly string[]): string | undefined {
  if (!/^[[{]/.test(text)) return undefined;
  try {
    return JSON.stringify(withoutSecretMessages(JSON.parse(text) as unknown, submittedSecrets));
  } catch {
    return undefined;
  }
}

/** Removes every part of the API key from text MAAS sent back (it echoes token keys in 401s). */
export function scrubApiKey(text: string, apiKey: string): string {
  let out = text;
  const parts = [apiKey, ...apiKey.split(':')].filter((p) => p.length > 0).sort((a, b) => b.length - a.length);
  for (const part of parts) out = out.split(part).join('[redacted]');
  return out;
}
