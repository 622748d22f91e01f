/**
 * Small tmpfs mounts for disk-full tests: a piece of DATA_DIR (journal.db, read.db, auth.db, snapshots/)
 * is a symlink into its own mount (SQLite follows the link and keeps -wal/-shm next to the real file), so
 * one store's file system can be filled while the others keep working.
 *
 * Mounting needs root (the dev machine and CI run tests as root). A test that cannot mount fails: a
 * disk-full test that silently skipped would prove nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Tmpfs {
  private filler: string | undefined;

  private constructor(readonly dir: string) {}

  /** Mounts a tmpfs of `sizeMb` on a fresh directory; throws (failing the test) if it cannot. */
  static mount(sizeMb: number): Tmpfs {
    const dir = mkdtempSync(join(tmpdir(), 'perpx-tmpfs-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`cannot mount a tmpfs for the disk-full test (needs root): ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
    }
    return new Tmpfs(dir);
  }

  /** Makes `dataDir/name` a symlink to the same name on this mount (a directory when `directory`). */
  hold(dataDir: string, name: string, directory = false): void {
    mkdirSync(dataDir, { recursive: true });
    if (directory) mkdirSync(join(this.dir, name), { recursive: true });
    symlinkSync(join(this.dir, name), join(dataDir, name));
  }

  /** Bytes still free on the mount. */
  get free(): number {
    const s = statfsSync(this.dir);
    return s.bavail * s.bsize;
  }

  /** Writes a filler file until the file system is full (ENOSPC). */
  fill(): void {
    this.filler ??= join(this.dir, `filler-${process.pid}`);
    const fd = openSync(this.filler, 'a');
    try {
      for (const size of [1 << 20, 1 << 12, 1]) {
        const chunk = Buffer.alloc(size);
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw err;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    assert.equal(this.free, 0, 'the file system is full');
  }

  /** Removes the filler: the space is free again. */
  release(): void {
    if (this.filler) unlinkSync(this.filler);
    this.filler = undefined;
  }

  unmount(): void {
    try {
      execFileSync('umount', [this.dir], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', this.dir], { stdio: 'pipe' }); // still busy (a file held open): detach lazily
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
