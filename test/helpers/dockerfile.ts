/** Just enough of the Dockerfile grammar to check our own Dockerfile: no heredocs, no ARG expansion. */

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

export interface Copy {
  from: string | null;
  chown: string | null;
  sources: string[];
  dest: string;
}

/** Joins continuation lines, drops comments and blank lines, splits into stages at each FROM. */
export function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | null = null;
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (!pending && (trimmed === '' || trimmed.startsWith('#'))) return;
    if (pending && trimmed.startsWith('#')) return;
    const continued = trimmed.endsWith('\\');
    const piece = continued ? trimmed.slice(0, -1).trim() : trimmed;
    pending = pending ? { text: `${pending.text} ${piece}`.trim(), line: pending.line } : { text: piece, line: index + 1 };
    if (continued) return;
    const match = /^(\S+)\s*(.*)$/.exec(pending.text);
    if (match) instructions.push({ keyword: (match[1] ?? '').toUpperCase(), args: match[2] ?? '', line: pending.line });
    pending = null;
  });
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/).filter((w) => !w.startsWith('--'));
      const as = words.findIndex((w) => w.toUpperCase() === 'AS');
      stages.push({ image: words[0] ?? '', name: as >= 0 ? (words[as + 1] ?? null) : null, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
    stage.instructions.push(instruction);
  }
  return stages;
}

/** The JSON (exec) form of ENTRYPOINT, CMD or RUN, or null for the shell form. */
export function execForm(args: string): string[] | null {
  if (!args.trim().startsWith('[')) return null;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : null;
}

export function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      const flag = (name: string) => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3) ?? null;
      return { from: flag('from'), chown: flag('chown'), sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
    });
}

export function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1);
}
