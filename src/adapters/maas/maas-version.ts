/** MAAS version strings as `GET version/` returns them (`3.5.0`, `3.6.0~beta2`, `3.4.1-14343-g.9b1e2b4d5`). */

/** Major and minor, or null when the text names no version. */
export function parseMaasVersion(text: string): { major: number; minor: number } | null {
  const m = /^(\d+)\.(\d+)/.exec(text.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
}

/** True when `text` is at least major.minor; an unreadable version counts as not. */
export function versionAtLeast(text: string, major: number, minor: number): boolean {
  const v = parseMaasVersion(text);
  if (!v) return false;
  return v.major > major || (v.major === major && v.minor >= minor);
}
