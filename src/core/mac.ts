/**
 * MAC addresses as people, MAAS and virsh write them (`52:54:00:3A:91:0C`, `52-54-00-3a-91-0c`,
 * `5254.003a.910c`, `5254003a910c`), normalised to lowercase colon form for comparison.
 */
export type Mac = string & { readonly __mac: true };

const GROUPINGS: RegExp[] = [
  /^[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}$/,
  /^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$/,
  /^[0-9a-f]{12}$/,
];

/** The canonical form (`52:54:00:3a:91:0c`), or null when the text is not a 48-bit MAC. */
export function normaliseMac(text: string): Mac | null {
  const value = text.trim().toLowerCase();
  if (!GROUPINGS.some((re) => re.test(value))) return null;
  const hex = value.replace(/[^0-9a-f]/g, '');
  return (hex.match(/../g) as string[]).join(':') as Mac;
}

export function isMac(text: string): boolean {
  return normaliseMac(text) !== null;
}

/** Equal after normalisation; an unparseable MAC equals nothing. */
export function sameMac(a: string, b: string): boolean {
  const na = normaliseMac(a);
  return na !== null && na === normaliseMac(b);
}
