/** Equality-based label selectors as the API server accepts them: `a=b`, `a==b`, `a!=b`, `a`, `!a`. */
export type Requirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'exists' | 'absent' };

/** null when the selector does not parse (the API server answers 400). */
export function parseLabelSelector(text: string): Requirement[] | null {
  const out: Requirement[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([A-Za-z0-9./_-]+)\s*(==|!=|=)\s*([A-Za-z0-9._-]*)$/.exec(part);
    if (m) {
      out.push({ key: m[1] as string, op: m[2] === '!=' ? 'neq' : 'eq', value: m[3] as string });
      continue;
    }
    const bare = /^(!?)([A-Za-z0-9./_-]+)$/.exec(part);
    if (!bare) return null;
    out.push({ key: bare[2] as string, op: bare[1] ? 'absent' : 'exists' });
  }
  return out;
}

export function matchesLabelSelector(labels: Record<string, string>, requirements: readonly Requirement[]): boolean {
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'eq':
        return has && labels[r.key] === r.value;
      case 'neq':
        return !has || labels[r.key] !== r.value;
      case 'exists':
        return has;
      case 'absent':
        return !has;
    }
  });
}
