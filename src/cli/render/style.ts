/** ANSI styling, off when stdout is not a terminal or NO_COLOR is set. */
export interface Style {
  readonly green: (s: string) => string;
  readonly yellow: (s: string) => string;
  readonly red: (s: string) => string;
  readonly cyan: (s: string) => string;
  readonly magenta: (s: string) => string;
  readonly dim: (s: string) => string;
  readonly bold: (s: string) => string;
}

const wrap = (on: boolean, code: number, close: number) => (s: string) =>
  on ? `\u001b[${code}m${s}\u001b[${close}m` : s;

/** A style for a stream. */
export function styleFor(stream: NodeJS.WriteStream): Style {
  const on = Boolean(stream.isTTY) && !process.env['NO_COLOR'] && process.env['TERM'] !== 'dumb';
  return {
    green: wrap(on, 32, 39),
    yellow: wrap(on, 33, 39),
    red: wrap(on, 31, 39),
    cyan: wrap(on, 36, 39),
    magenta: wrap(on, 35, 39),
    dim: wrap(on, 2, 22),
    bold: wrap(on, 1, 22),
  };
}
