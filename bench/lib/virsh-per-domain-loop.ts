import { sh, type SafeCommand } from '../../src/adapters/ssh/shell-quote.ts';
import type { SshSession } from '../../src/adapters/ssh/types.ts';
import { classifyDomiflist, randomMarker, type DomainProbe, type DomainQuery } from '../../src/adapters/ssh/virsh.ts';

/*
 * The baseline: the VM host script as it was before the virsh batch. One SSH command per host,
 * but inside it one `virsh domiflist` process (one libvirt connection) per domain.
 */
const LOOP_SCRIPT =
  'm=$1; shift; i=0; ' +
  'while [ "$#" -ge 2 ]; do ' +
  'printf "\\n%s begin %s\\n" "$m" "$i"; ' +
  'LC_ALL=C virsh -q --connect "$1" domiflist -- "$2" </dev/null 2>&1; rc=$?; ' +
  'printf "\\n%s end %s %s\\n" "$m" "$i" "$rc"; ' +
  'i=$((i+1)); shift 2; done';

function loopCommand(queries: DomainQuery[], marker: string): SafeCommand {
  return sh`sh -c ${LOOP_SCRIPT} mac-diff ${marker} ${queries.flatMap((q) => [q.uri, q.domain])}`;
}

/** Reads every domain with the per-domain loop; one probe per query, in order. */
export async function probeWithLoop(session: SshSession, queries: DomainQuery[]): Promise<DomainProbe[]> {
  const marker = randomMarker();
  const { stdout } = await session.exec(loopCommand(queries, marker), { timeoutMs: 600_000 });
  const frames = new Map<number, { lines: string[]; rc: number | null }>();
  let current: { lines: string[]; rc: number | null } | undefined;
  for (const line of stdout.split('\n')) {
    if (line.startsWith(`${marker} begin `)) {
      current = { lines: [], rc: null };
      frames.set(Number(line.split(' ')[2]), current);
    } else if (line.startsWith(`${marker} end `) && current) {
      current.rc = Number(line.split(' ')[3]);
      current = undefined;
    } else current?.lines.push(line);
  }
  return queries.map((_q, i) => {
    const f = frames.get(i);
    return f ? classifyDomiflist(f.lines.join('\n'), f.rc) : { kind: 'error', message: 'no frame', exitCode: null };
  });
}
