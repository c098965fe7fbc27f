/** Line breaks of every kind: text from outside can carry any of them. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;

/**
 * Outside text shown inside a line stays on that line: each line break is shown as `⏎`, so a
 * hostname cannot start a line of its own (`east-e10⏎:white_check_mark: All machines verified`).
 */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAK, '⏎');
}
