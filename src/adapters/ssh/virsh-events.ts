import { sh, type SafeCommand } from './shell-quote.ts';

/** One line of `virsh event --event lifecycle`: which domain, and what happened to it. */
export interface LifecycleEvent {
  domain: string;
  /** `Defined`, `Undefined`, `Started`, `Stopped`, ... (libvirt's virshDomainEvent words). */
  event: string;
  /** `Added`, `Updated`, `Removed`, `Booted`, `Destroyed`, ... */
  detail: string;
}

/*
 * libvirt tools/virsh-domain-event.c, virshEventLifecyclePrint: "event 'lifecycle' for domain
 * '%s': %s %s\n", optionally after a `--timestamp` prefix. The event word is one of the
 * virshDomainEvent table's (or "unknown"); the detail may hold blanks ("Event wakeup"). The
 * strings are translated, so the watch runs virsh with LC_ALL=C. Greedy on the name: a domain
 * named with `': ` in it still parses, the event being the last such split.
 */
const LIFECYCLE_LINE = /^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}[+-]\d{4}: )?event 'lifecycle' for domain '(.*)': (Defined|Undefined|Started|Suspended|Resumed|Stopped|Shutdown|PMSuspended|Crashed|unknown) (.+)$/;

/** A lifecycle event line, or null for anything else (`event loop timed out`, `events received: N`, a blank). */
export function parseLifecycleLine(line: string): LifecycleEvent | null {
  const match = LIFECYCLE_LINE.exec(line);
  if (!match) return null;
  const [, domain = '', event = '', detail = ''] = match;
  return { domain, event, detail };
}

/** A domain was defined or undefined: its NICs (and their MACs) may be new. */
export function changesDefinition(event: LifecycleEvent): boolean {
  return event.event === 'Defined' || event.event === 'Undefined';
}

/*
 * `--all` and `--event` are mutually exclusive (cmdEvent: VSH_EXCLUSIVE_OPTIONS("all", "event");
 * test/fixtures/virsh/event-all-with-event.txt); without `--domain`, virsh already listens to
 * every domain of the connection. `--loop` keeps it running. Without a terminal sshd does not
 * signal a command whose session ends (OpenSSH session.c, session_close_by_channel: it only
 * closes the command's pipes), so a virsh left behind by a dropped session would live
 * on until its next event's write failed: the script ties virsh to the channel instead. virsh
 * runs in the background with stdin closed; a reader holds the channel's stdin (fd 3) and kills
 * virsh at its end of file, which comes when the session closes for any reason; the script exits
 * with virsh's own status when virsh ends first (libvirtd restarting ends the event loop: libvirt
 * tools/virsh.c, virshCatchDisconnect). `sh -c` keeps this out of a login shell that is not POSIX.
 */
const EVENT_SCRIPT = [
  'exec 3<&0 </dev/null',
  'LC_ALL=C virsh --connect "$1" event --loop --event lifecycle &',
  'v=$!',
  '{ cat <&3 >/dev/null 2>&1; kill "$v" 2>/dev/null; } &',
  'r=$!',
  'wait "$v"; s=$?',
  'kill "$r" 2>/dev/null',
  'exit "$s"',
].join('\n');

/** The remote command that streams one libvirt connection's lifecycle events. */
export function virshEventCommand(uri: string): SafeCommand {
  return sh`sh -c ${EVENT_SCRIPT} vm-host-watch ${uri}`;
}
