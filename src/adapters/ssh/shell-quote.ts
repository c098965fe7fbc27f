declare const safeCommand: unique symbol;

/** A remote command line whose every interpolated value was quoted by `sh`. */
export type SafeCommand = string & { readonly [safeCommand]: true };

/** Quotes one argument for a POSIX shell: the remote shell sees it as one literal word. */
export function quoteArg(value: string): string {
  if (value.includes('\0')) throw new Error('an argument may not contain a NUL byte');
  if (value !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

type Arg = string | number | readonly (string | number)[] | SafeCommand;

function render(value: Arg): string {
  if (Array.isArray(value)) return value.map((v) => quoteArg(String(v))).join(' ');
  return quoteArg(String(value));
}

/**
 * Tagged template for remote commands: the literal parts are ours, every `${value}`
 * is quoted (arrays become several quoted words). `raw(cmd)` embeds another SafeCommand.
 */
export function sh(strings: TemplateStringsArray, ...values: (Arg | RawCommand)[]): SafeCommand {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += v instanceof RawCommand ? v.command : render(v as Arg);
    out += strings[i + 1] ?? '';
  });
  return out as SafeCommand;
}

export class RawCommand {
  constructor(readonly command: SafeCommand) {}
}

export function raw(command: SafeCommand): RawCommand {
  return new RawCommand(command);
}
