// The `virsh` of a simulated VM host, run as `node virsh-stub.mjs STATE.json [virsh args...]`.
// It answers as libvirt-clients 9 does: global options (-q, -c/--connect), then either one
// argument holding a `;`-separated command string (parsed by the same rules as libvirt's
// tools/vsh.c vshCommandStringGetArg), several arguments read as one command, or none
// (commands read line by line from stdin). Commands: domiflist, list, echo, connect, quit, and
// `event` (lifecycle only): it prints each entry appended to the state's `events` after it
// started, in libvirt tools/virsh-domain-event.c's format (test/fixtures/virsh/event-*.txt), and
// with --loop runs until --timeout or until it is killed.
// Output and exit status follow the real binary (test/fixtures/virsh): errors on stderr after a
// flushed stdout, a blank line on stdout after each failed command in non-quiet mode, the
// exit status of the last command. A parse error runs nothing. The state is read once per
// process, as one libvirt connection's view. Optional `costs` in the state
// (connectMs per process, commandMs per command) make it take the time a real libvirt
// connection and RPC take. Plain JavaScript: it runs as a program, without tsx.
import { appendFileSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

const HEADER = [' Interface   Type      Source     Model    MAC', '-------------------------------------------------------------'];

class ParseError extends Error {}

function out(text) {
  writeSync(1, text);
}

function err(text) {
  writeSync(2, text);
}

function sleep(ms) {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** vsh's tokenizer: blanks and `;`/newline separate; '...' literal; "..." and bare `\` escape. */
export function tokenize(text) {
  const commands = [];
  let words = [];
  let i = 0;
  const endCommand = () => {
    if (words.length) commands.push(words);
    words = [];
  };
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === ';' || c === '\n') {
      endCommand();
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      endCommand();
      i++;
      continue;
    }
    let word = '';
    let single = false;
    let double = false;
    while (i < text.length) {
      const ch = text[i];
      if (!single && !double && (ch === ' ' || ch === '\t' || ch === ';' || ch === '\n')) break;
      if (!double && ch === "'") {
        single = !single;
        i++;
        continue;
      }
      if (!single && ch === '\\') {
        i++;
        if (i >= text.length) throw new ParseError('dangling \\');
        if (text[i] === '\n') {
          i++;
          continue;
        }
      } else if (!single && ch === '"') {
        double = !double;
        i++;
        continue;
      }
      word += text[i];
      i++;
    }
    if (double) throw new ParseError('missing "');
    words.push(word);
  }
  endCommand();
  return commands;
}

const COMMANDS = {
  domiflist: { options: ['--inactive'], data: ['domain'] },
  list: { options: ['--all', '--name', '--inactive', '--uuid', '--table'], data: [] },
  echo: { options: ['--shell', '--xml', '--split'], data: ['*'] },
  connect: { options: ['--readonly'], data: ['name'] },
  quit: { options: [], data: [] },
  event: { options: ['--all', '--loop', '--list', '--timestamp'], data: [], named: ['domain', 'event', 'timeout'] },
  exit: { options: [], data: [] },
};

/** One command's words into { name, flags, values }, as vshCommandParse checks them. */
function parseCommand(words) {
  const [name, ...rest] = words;
  const def = COMMANDS[name];
  if (!def) throw new ParseError(`unknown command: '${name}'`);
  const flags = new Set();
  const values = {};
  const positional = [];
  let dataOnly = false;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i];
    if (!dataOnly && word === '--') {
      dataOnly = true;
      continue;
    }
    if (!dataOnly && word.startsWith('--') && name !== 'echo') {
      const named = [...def.data, ...(def.named ?? [])].find((d) => word === `--${d}`);
      if (named) {
        if (i + 1 >= rest.length) throw new ParseError(`expected syntax: ${word} <string>`);
        values[named] = rest[++i];
        continue;
      }
      if (!def.options.includes(word)) throw new ParseError(`command '${name}' doesn't support option ${word}`);
      flags.add(word);
      continue;
    }
    positional.push(word);
  }
  if (def.data[0] === '*') return { name, flags, values, positional };
  for (const d of def.data) if (values[d] === undefined && positional.length) values[d] = positional.shift();
  if (positional.length) throw new ParseError(`unexpected data '${positional[0]}'`);
  for (const d of def.data) if (values[d] === undefined) throw new ParseError(`command '${name}' requires <${d}> option`);
  return { name, flags, values, positional };
}

function readState(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function domiflist(state, ctx, domain) {
  if (domain === '') {
    err("error: Failed to get option 'domain': Option argument is empty\n");
    return false;
  }
  const found = (state.domains ?? []).find((d) => d.name === domain);
  if (!found) {
    err(`error: failed to get domain '${domain}'\n`);
    return false;
  }
  const before = vnetBase(state).get(found) ?? 0;
  const rows = found.nics.map((n, k) => {
    const iface = found.running === false ? '-' : `vnet${before + k}`;
    return ` ${iface.padEnd(11)} ${(n.type ?? 'bridge').padEnd(9)} ${(n.source ?? 'br-metal').padEnd(10)} ${(n.model ?? 'virtio').padEnd(8)} ${n.mac}`;
  });
  out([...(ctx.quiet ? [] : HEADER), ...rows, ''].join('\n') + (ctx.quiet ? '' : '\n'));
  return true;
}

/** The first vnet number of each running domain: vnets are numbered across the host in domain order. */
function vnetBase(state) {
  if (!state.vnets) {
    state.vnets = new Map();
    let next = 0;
    for (const d of state.domains ?? []) {
      state.vnets.set(d, next);
      if (d.running !== false) next += d.nics.length;
    }
  }
  return state.vnets;
}

function run(ctx, command) {
  const state = ctx.state;
  switch (command.name) {
    case 'echo': {
      out(command.positional.join(' ') + (ctx.quiet ? '' : '\n'));
      return true;
    }
    case 'connect': {
      ctx.uri = command.values.name;
      sleep(state.costs?.connectMs ?? 0);
      if (ctx.uri !== (state.uri ?? 'qemu:///system')) {
        err('error: failed to connect to the hypervisor\n');
        ctx.connected = false;
        return false;
      }
      ctx.connected = true;
      return true;
    }
    case 'quit':
    case 'exit':
      ctx.quit = true;
      return true;
    case 'event':
      err('error: the simulated virsh runs `event` only as the one command of its process\n');
      return false;
    default:
      if (!ctx.connected) {
        err('error: no valid connection\n');
        return false;
      }
      sleep(state.costs?.commandMs ?? 0);
      if (command.name === 'list') {
        const names = (state.domains ?? []).map((d) => d.name);
        out(names.map((n) => `${n}\n`).join('') + (ctx.quiet ? '' : '\n'));
        return true;
      }
      return domiflist(state, ctx, command.values.domain);
  }
}

/** Runs parsed commands in order; the last one's result is the exit status, as vshCommandRun does. */
function runAll(ctx, commands) {
  let ok = true;
  for (const command of commands) {
    ok = run(ctx, command);
    if (!ok && !ctx.quiet) out('\n');
    if (ctx.quit) break;
  }
  return ok;
}

function main(argv) {
  const [statePath, ...args] = argv;
  const ctx = { statePath, quiet: false, uri: 'qemu:///session', connected: false, quit: false };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === '-q' || a === '--quiet') ctx.quiet = true;
    else if (a === '-c' || a === '--connect') ctx.uri = args[++i];
    else if (a.startsWith('--connect=')) ctx.uri = a.slice('--connect='.length);
    else if (a === '-r' || a === '--readonly') continue;
    else if (a.startsWith('-') && a !== '-') {
      err(`virsh: unrecognized option '${a}'\n`);
      return 1;
    } else break;
  }
  const rest = args.slice(i);
  const state = readState(statePath);
  ctx.state = state;
  sleep(state.costs?.connectMs ?? 0);
  if (ctx.uri !== (state.uri ?? 'qemu:///system')) {
    err(`error: failed to connect to the hypervisor\nerror: no domain list for ${ctx.uri} on this simulated host\n`);
    return 1;
  }
  ctx.connected = true;
  let text;
  if (rest.length === 0) text = readFileSync(0, 'utf8');
  try {
    const commands = rest.length > 1 ? [parseCommand(rest)] : tokenize(rest.length === 1 ? rest[0] : text).map(parseCommand);
    if (commands.length === 1 && commands[0].name === 'event') return runEvent(ctx, commands[0]);
    return runAll(ctx, commands) ? 0 : 1;
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    err(`error: ${e.message}\n`);
    return 1;
  }
}

const EVENT_TYPES = ['lifecycle', 'reboot', 'rtc-change', 'watchdog', 'io-error', 'graphics'];
const POLL_MS = 20;

/** `event`, as cmdEvent checks and prints it; resolves to the exit status. */
function runEvent(ctx, command) {
  const { flags, values } = command;
  const exclusive = [['--all', 'event'], ['--list', '--all'], ['--list', 'event']].find(([a, b]) => has(command, a) && has(command, b));
  if (exclusive) return fail(`Options ${exclusive.map((o) => `--${o.replace(/^--/, '')}`).join(' and ')} are mutually exclusive`);
  if (flags.has('--list')) {
    out(EVENT_TYPES.map((t) => `${t}\n`).join('') + (ctx.quiet ? '' : '\n'));
    return 0;
  }
  if (values.event === undefined && !flags.has('--all')) return fail('one of --list, --all, or --event <type> is required');
  if (values.event !== undefined && !EVENT_TYPES.includes(values.event)) return fail(`unknown event type ${values.event}`);
  const lifecycle = flags.has('--all') || values.event === 'lifecycle';
  const timeoutMs = values.timeout === undefined ? null : Number(values.timeout) * 1000;
  let seen = (ctx.state.events ?? []).length;
  const restarts = ctx.state.libvirtRestarts ?? 0;
  let count = 0;
  // Not virsh's: tells the lab this process now listens (events appended from here on reach it).
  appendFileSync(join(dirname(ctx.statePath), 'event-listeners.log'), `${process.pid} ${seen}\n`);
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      const state = readState(ctx.statePath);
      // libvirt tools/virsh.c, virshCatchDisconnect: the connection closing ends the event loop.
      if ((state.libvirtRestarts ?? 0) > restarts) {
        err(`error: Disconnected from ${ctx.uri} due to end of file\n`);
        finish(null);
        return;
      }
      const events = state.events ?? [];
      for (const e of events.slice(seen)) {
        if (!lifecycle || (values.domain !== undefined && e.domain !== values.domain)) continue;
        out(`${flags.has('--timestamp') ? `${timestamp()}: ` : ''}event 'lifecycle' for domain '${e.domain}': ${e.event} ${e.detail}\n`);
        count++;
        if (!flags.has('--loop')) break;
      }
      seen = events.length;
      if (count && !flags.has('--loop')) finish(null);
    }, POLL_MS);
    const timer = timeoutMs === null ? undefined : setTimeout(() => finish('event loop timed out\n'), timeoutMs);
    function finish(reason) {
      clearInterval(poll);
      clearTimeout(timer);
      out(`${reason ?? ''}events received: ${count}\n\n`);
      resolve(count ? 0 : 1);
    }
  });
}

function has(command, option) {
  return option.startsWith('--') ? command.flags.has(option) : command.values[option] !== undefined;
}

function fail(message) {
  err(`error: ${message}\n`);
  out('\n');
  return 1;
}

/** virTimeStringNowRaw: UTC, milliseconds, `+0000`. */
function timestamp() {
  return new Date().toISOString().replace('T', ' ').replace('Z', '+0000');
}

const status = main(process.argv.slice(2));
if (typeof status === 'number') process.exitCode = status;
else status.then((code) => (process.exitCode = code));
