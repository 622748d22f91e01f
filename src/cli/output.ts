/** Printing for the CLI: JSON with --json, a short human line or table otherwise. */
export function printResult(json: boolean, value: unknown, text: () => string): void {
  process.stdout.write((json ? JSON.stringify(value, null, 2) : text()) + '\n');
}

/** Left-aligned text table. */
export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}
