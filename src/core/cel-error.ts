/**
 * The short form of an error of the CEL library (checks and policies share it): its summary, without
 * the code frame, and the column of the expression it points at (1-based). Never throws.
 */
export function celErrorText(e: unknown): string {
  if (e instanceof Error) {
    const { summary, range } = e as Error & { summary?: string; range?: { start: number } };
    const text = summary ?? e.message.split('\n')[0] ?? e.message;
    return range ? `${text} (at column ${range.start + 1})` : text;
  }
  return String(e);
}
