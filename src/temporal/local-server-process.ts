/**
 * The dev server process of `npm start` as the operating system sees it: its pidfile under
 * DATA_DIR/temporal, whether a pid is really our `temporal server start-dev` on this DATA_DIR, and
 * ending one (README "What `npm start` runs"). A SIGKILL of `npm start` leaves the dev server
 * running; the next start finds it here and ends it before it starts its own.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** The command line of `pid`, or undefined when there is no such (living) process. */
function commandLine(pid: number): string[] | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // A zombie (exited, not yet reaped) has an empty command line: it is no longer a server.
    return raw ? raw.split('\0').filter(Boolean) : undefined;
  } catch {
    // No /proc (macOS): ask ps; the arguments then come space-separated.
    const ps = spawnSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' });
    const line = ps.status === 0 ? ps.stdout.trim() : '';
    return line ? line.split(/\s+/) : undefined;
  }
}

/** Whether `pid` is `temporal server start-dev` on the database file `dbFile` (so ours, not a reused pid). */
export function isOurDevServer(pid: number, dbFile: string): boolean {
  const args = commandLine(pid);
  if (!args) return false;
  const at = args.indexOf('--db-filename');
  return args.includes('server') && args.includes('start-dev') && at >= 0 && args[at + 1] === dbFile;
}

export function readPidFile(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function writePidFile(file: string, pid: number): void {
  fs.writeFileSync(file, `${pid}\n`);
}

export function removePidFile(file: string, pid: number): void {
  // Only our own: a newer start may already have written its pid here.
  if (readPidFile(file) === pid) fs.rmSync(file, { force: true });
}

async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once `gone()` says the process has ended. */
export async function endProcess(pid: number, gone: () => boolean, graceMs = 10_000): Promise<void> {
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(pid, s);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  if (await until(gone, graceMs)) return;
  signal('SIGKILL');
  if (!(await until(gone, 5_000))) throw new Error(`Temporal dev server (pid ${pid}) did not end after SIGKILL`);
}

function parentOf(pid: number): number | undefined {
  try {
    // Field 4 of /proc/<pid>/stat, after the command name in parentheses (which may hold spaces).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) || undefined;
  } catch {
    const ps = spawnSync('ps', ['-p', String(pid), '-o', 'ppid='], { encoding: 'utf8' });
    return Number(ps.stdout.trim()) || undefined;
  }
}

/** The `npm start` (src/cli/start) still running the dev server `pid`, if its parent is one. */
function liveOwner(pid: number): number | undefined {
  const parent = parentOf(pid);
  const args = parent === undefined ? undefined : commandLine(parent);
  return args?.some((a) => /src\/cli\/start\.[jt]s$/.test(a)) ? parent : undefined;
}

/**
 * Ends the dev server a killed `npm start` left behind on this DATA_DIR (its pidfile names it and
 * its command line is ours), so the new one gets the database file. A dev server whose `npm start`
 * still runs is not an orphan: that is `owner`, and nothing is ended.
 */
export async function endOrphan(pidFile: string, dbFile: string): Promise<{ ended?: number; owner?: number }> {
  const pid = readPidFile(pidFile);
  if (pid === undefined) return {};
  if (!isOurDevServer(pid, dbFile)) {
    fs.rmSync(pidFile, { force: true });
    return {};
  }
  const owner = liveOwner(pid);
  if (owner !== undefined) return { owner };
  await endProcess(pid, () => !isOurDevServer(pid, dbFile));
  fs.rmSync(pidFile, { force: true });
  return { ended: pid };
}
