/**
 * A one-line progress bar on stderr: redrawn in place on a TTY, a line per 10 % otherwise (CI logs).
 */
export class ProgressBar {
  private readonly started = Date.now();
  private lastDecile = -1;
  private drawn = false;

  constructor(private readonly label: string, private readonly out: NodeJS.WriteStream = process.stderr, private readonly width = 30) {}

  update(done: number, total: number): void {
    const frac = total > 0 ? Math.min(1, done / total) : 1;
    const secs = Math.max(0.001, (Date.now() - this.started) / 1000);
    const rate = Math.round(done / secs);
    const text = `${this.label} ${(frac * 100).toFixed(1).padStart(5)}% ${done}/${total} (${rate}/s)`;
    if (this.out.isTTY) {
      const full = Math.round(frac * this.width);
      this.out.write(`\r[${'#'.repeat(full)}${'-'.repeat(this.width - full)}] ${text}`);
      this.drawn = true;
    } else {
      const decile = Math.floor(frac * 10);
      if (decile !== this.lastDecile) {
        this.lastDecile = decile;
        this.out.write(text + '\n');
      }
    }
  }

  finish(): void {
    if (this.drawn) this.out.write('\n');
  }
}
