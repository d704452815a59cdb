/**
 * The service against an external baseline (docs/performance.md "Method"), each in its own process, driven
 * by autocannon in a third process, all on 127.0.0.1, in one run:
 *
 *   - baseline: bench/baseline-server.ts, bare Koa + koa-body + one pg `INSERT … RETURNING`;
 *   - service: the real `npm start` entry point (src/cli/start.ts), launched as package.json's
 *     `start` script launches it (its environment and node options), on the same PostgreSQL, with
 *     the official Temporal dev server it spawns and the acquirer simulator;
 *   - for each endpoint, the baseline is measured right before it under the same load, so every
 *     ratio compares two figures taken a few seconds apart on the same machine;
 *   - each measured load follows `--warmup` seconds (default 5) of the same load, unmeasured, on
 *     the baseline and on the service alike (`warmUp`); `--warmup 0` measures from cold.
 *
 *   npx tsx bench/external.ts [--seconds 8] [--connections 32] [--out bench/results.json]
 *                             [--warmup 5]
 *                             [--deep-list] [--cpu-prof <dir>] [--only <endpoint text>]
 *
 * Each row also gives the service's CPU per request by thread (`PIXFLOW_THREAD_MAP`, see
 * src/lib/threads.ts), PostgreSQL's CPU per request, and the whole machine's CPU per request for
 * the service and for the baseline (on a CPU-bound machine their ratio bounds the req/s ratio).
 * After each load the bench waits for the service and PostgreSQL to be quiet (`settle`);
 * `BENCH_SETTLE_MIN_MS` makes it wait at least that long (to tell a lasting effect of a load from
 * a passing one). `BENCH_SERVICE_NODE_FLAGS` adds Node/V8 flags to the service's command line only
 * (e.g. "--v8-pool-size=1" or "--trace-gc"), not to the baseline's or autocannon's;
 * `BENCH_SERVICE_LOG=<file>` keeps the service's whole output there.
 *
 * `BENCH_TAIL=1` prints the tail of each child's output when it stops. `--deep-list` measures instead the list of a merchant with 1,000,000 charges (made with one
 * INSERT … SELECT generate_series), the service's list cache off, 16 connections: first page and
 * page 500, with and without a status filter. `--cpu-prof <dir>` writes the service's V8 CPU
 * profile there when it stops (open it in Chrome DevTools or speedscope).
 *
 * Bounded: each measurement lasts `seconds`; nothing listens beyond loopback.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { stderrProgress } from '../src/process/progress';
import { isValidCpf } from '../src/pix/document';
import { startTemporalProcess } from '../tools/harness/src/stack';

const ROOT = path.resolve(__dirname, '..');
const run = promisify(execFile);
/** Each long step of a run, as it begins, on stderr (the results go to stdout). */
const progress = stderrProgress('bench');

export interface ExternalMeasure {
  endpoint: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /**
   * CPU the whole machine spent per request during the load (every process: the server measured,
   * PostgreSQL, autocannon, and anything else running), ms.
   */
  machineCpuMsPerRequest?: number;
  /** `--deep-list`: CPU of the service process per request (all its threads), µs. */
  serviceCpuUsPerReq?: number;
  /** CPU of the PostgreSQL server per request (every endpoint of the service; `--deep-list`), µs. */
  postgresCpuUsPerReq?: number;
  /**
   * Service CPU per request, ms (from /proc: its main thread, and the whole process with every
   * thread): unlike req/s, barely moved by whatever else the machine runs at the time.
   */
  cpuMsPerRequest?: { mainThread: number; process: number };
  /**
   * After the load: how long until the service was quiet again, the CPU it spent meanwhile, and
   * the process CPU per request counting that aftermath (see `settle`).
   */
  settled?: { seconds: number; cpuSeconds: number; cpuMsPerRequest: { process: number } };
  /** The service's CPU per request by thread (see `threadCpu`), ms. */
  cpuMsPerRequestByThread?: Record<string, number>;
  /** Peak resident memory of the service during this endpoint's warm-up and load (see `resetPeakRss`), MB. */
  peakRssMb?: number;
  /**
   * Deadlocks PostgreSQL detected in the service's database during the warm-up and load: each one
   * held its transactions for `deadlock_timeout` (1 s) first, a stall every request in flight shares.
   */
  postgresDeadlocks?: number;
}

export interface ExternalRow {
  endpoint: string;
  service: ExternalMeasure;
  baseline: ExternalMeasure;
  /** Service req/s over baseline req/s, measured back to back. */
  ratio: number;
  /**
   * `POST /v1/charges` only: the baseline's insert followed by a durable workflow start (a run in
   * the official Temporal dev server, `temporal server start-dev`, parked in a start delay), measured right after the service, and
   * its req/s over the bare insert's: what that one guarantee leaves of the ratio.
   */
  durableBaseline?: ExternalMeasure;
  durableRatio?: number;
}

export interface ExternalBenchResult {
  date: string;
  machine: { cpus: number; model: string; memoryGiB: number; node: string };
  seconds: number;
  /** Seconds of unmeasured load before each measured one (0: measured from cold). */
  warmupSeconds: number;
  connections: number;
  rows: ExternalRow[];
  /**
   * Peak resident memory of the service process while the endpoints were loaded, MB: the largest
   * of the rows' `peakRssMb` (VmHWM, reset before each endpoint's warm-up).
   */
  servicePeakRssMb: number;
  /** Peak resident memory from the service's start to the first load (start-up, provisioning, seeding), MB. */
  serviceSetupPeakRssMb?: number;
  /** `--deep-list`: GET /v1/charges for a merchant with `charges` charges, list cache off. */
  deepList?: { charges: number; connections: number; rows: ExternalMeasure[] };
}

interface Target {
  endpoint: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /**
   * Load spread over this many merchants, connection i presenting merchant i's API key
   * (`bench/load-keys.ts`), instead of one merchant for every connection.
   */
  merchants?: number;
  /** Connection i asks `paths[i mod n]` (`bench/load-keys.ts`) instead of `path` on every connection. */
  paths?: string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `fn` until it returns true, at most `ms`. */
async function until(what: string, ms: number, fn: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function call<T>(base: string, method: string, p: string, body?: unknown, token?: string): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A valid CPF no other merchant has (with a random one in a hundred valid, a few tries). */
function randomDocument(): string {
  for (;;) {
    const candidate = String(crypto.randomInt(10 ** 9, 10 ** 11)).padStart(11, '0');
    if (isValidCpf(candidate)) return candidate;
  }
}

/** A merchant ready to charge (KYC approved, acquirer account, ACTIVE PIX key), its id and API key. */
async function provision(
  base: string,
  admin: { email: string; password: string },
): Promise<{ merchantId: string; apiKey: string }> {
  const { token: adminToken } = await call<{ token: string }>(base, 'POST', '/v1/auth/login', admin);
  const email = `bench-${crypto.randomUUID()}@bench.test`;
  const password = 'bench-password-1';
  const { merchant } = await call<{ merchant: { id: string } }>(
    base,
    'POST',
    '/v1/admin/merchants',
    { name: 'Bench merchant', document: randomDocument(), email, password },
    adminToken,
  );
  await call(
    base,
    'PATCH',
    `/v1/admin/merchants/${merchant.id}`,
    { kycStatus: 'APPROVED', acquirerAccountId: 'acc-bench' },
    adminToken,
  );
  const { pixKey } = await call<{ pixKey: { id: string; status: string } }>(
    base,
    'POST',
    `/v1/admin/merchants/${merchant.id}/pix-keys`,
    { type: 'EMAIL', key: `pix-${crypto.randomUUID()}@bench.example.com` },
    adminToken,
  );
  await call(
    base,
    'PATCH',
    `/v1/admin/merchants/${merchant.id}/pix-keys/${pixKey.id}`,
    { status: 'ACTIVE' },
    adminToken,
  );
  const { token } = await call<{ token: string }>(base, 'POST', '/v1/auth/login', { email, password });
  const { apiKey } = await call<{ apiKey: { value: string } }>(base, 'POST', '/v1/api-keys', { name: 'bench' }, token);
  return { merchantId: merchant.id, apiKey: apiKey.value };
}

/**
 * `n` charges for one merchant in one statement: nine in ten CANCELED, one in ten PAID and settled
 * (nothing for the reconcilers to pick up), one second apart. Then VACUUM ANALYZE, as autovacuum
 * would do to a table of that size, so the planner knows it.
 */
/** Seeds as the superuser: VACUUM and CHECKPOINT are not the service role's (docs/production.md "Database roles"). */
async function seedCharges(dbUrl: string, merchantId: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  // In batches, each announced, so a seeding of a million rows shows it is moving.
  const batch = 100_000;
  try {
    for (let from = 1; from <= n; from += batch) {
      const to = Math.min(n, from + batch - 1);
      progress(`seeding charges ${from.toLocaleString('en')}–${to.toLocaleString('en')} of ${n.toLocaleString('en')}`);
      await client.query(
        `insert into charges (id, merchant_id, amount, description, status, expires_in, expires_at, paid_at, settled_at, created_at, updated_at)
       select 'ch_seed' || lpad(g::text, 8, '0'), $1, 100 + (g % 5000), 'Seeded charge',
              case when g % 10 = 0 then 'PAID' else 'CANCELED' end, 3600,
              now() - make_interval(secs => g) + interval '1 hour',
              case when g % 10 = 0 then now() - make_interval(secs => g) end,
              case when g % 10 = 0 then now() end,
              now() - make_interval(secs => g), now()
       from generate_series($2::int, $3::int) g`,
        [merchantId, from, to],
      );
    }
    progress('seeding: vacuum analyze and checkpoint');
    await client.query('vacuum analyze charges');
    await client.query('vacuum analyze charge_counts');
    await client.query('vacuum analyze charge_hour_counts');
    // The bulk insert's WAL is flushed now, not during the first measurement.
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

interface AutocannonJson {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

/**
 * An unmeasured load of `warmup` seconds before a measured one, on the same server and endpoint:
 * the service is a large program that V8 compiles while it runs (its optimizing compiler was ≈ 70 %
 * of the V8 helper thread's CPU during the first 8 s of charge creation:
 * docs/performance.md "Method": warm-up), the bare baseline a small one; measuring both from cold measured mostly
 * the service's compilation. Both sides get the same warm-up.
 */
async function warmUp(
  url: string,
  t: Target,
  o: { warmup?: number; connections: number; token?: string; tokens?: string[] },
): Promise<void> {
  if (!o.warmup) return;
  await load(url, t, { ...o, seconds: o.warmup });
}

/** Warm-up before each measured load unless `--warmup` says otherwise (docs/performance.md "Where a charge's time goes"). */
export const DEFAULT_WARMUP_SECONDS = 5;

/** One autocannon run in its own process. */
async function load(
  url: string,
  t: Target,
  o: { seconds: number; connections: number; token?: string; tokens?: string[] },
): Promise<ExternalMeasure> {
  let args: string[];
  if ((t.merchants && o.tokens) || t.paths) {
    const tokens = t.merchants && o.tokens ? o.tokens.slice(0, t.merchants) : [o.token ?? ''];
    const spec = { url, connections: o.connections, seconds: o.seconds, method: t.method, tokens, paths: t.paths };
    args = ['--import', 'tsx', path.join(ROOT, 'bench/load-keys.ts'), JSON.stringify(spec)];
  } else {
    args = [
      path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
      '--json',
      '-c',
      String(o.connections),
      '-d',
      String(o.seconds),
      '-m',
      t.method,
    ];
    args.push('-H', 'content-type=application/json');
    if (o.token) args.push('-H', `authorization=Bearer ${o.token}`);
    if (t.body !== undefined) args.push('-b', JSON.stringify(t.body));
    args.push(url);
  }
  const machineBefore = machineCpuSeconds();
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const machineCpu = machineCpuSeconds() - machineBefore;
  const r = JSON.parse(stdout) as AutocannonJson;
  const requests = Math.max(1, r.requests.average * o.seconds);
  return {
    endpoint: t.endpoint,
    reqPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    machineCpuMsPerRequest: Math.round((machineCpu * 1000 * 100) / requests) / 100,
  };
}

/**
 * CPU seconds the whole machine has spent busy (every core; /proc/stat: user, nice, system, irq and
 * softirq, so neither idle, iowait nor steal — the time the host gave our cores to another guest).
 * Per request, it says what one request costs the machine all in — service or baseline, PostgreSQL,
 * the load generator — and so how many requests per second two cores can give at most.
 */
export function machineCpuSeconds(): number {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, ...ticks] = line.trim().split(/\s+/);
    const n = ticks.map(Number);
    const busy = [0, 1, 2, 5, 6].reduce((sum, k) => sum + (n[k] ?? 0), 0);
    return busy / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system) of a process, or of one of its threads, from /proc. */
function cpuSeconds(pid: number, tid?: number): number {
  try {
    const stat = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds of each thread of a process, keyed by what it is: `main`, a name from the thread map
 * (`--threads`: our worker threads write "<name> <tid>" there as they start), else the thread's
 * comm with a trailing number dropped (the SDK's Rust threads, V8's and libuv's helpers; other
 * JavaScript threads such as the SDK's workflow thread show as `node`).
 */
function threadCpu(pid: number, threadMap?: string): Map<string, number> {
  const names = new Map<string, string>();
  if (threadMap) {
    try {
      for (const line of fs.readFileSync(threadMap, 'utf8').split('\n')) {
        const [name, tid] = line.split(' ');
        if (name && tid) names.set(tid, name);
      }
    } catch {
      // no thread has started yet
    }
  }
  const out = new Map<string, number>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      let key = tid === String(pid) ? 'main' : names.get(tid);
      if (!key) {
        try {
          key = fs
            .readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
            .trim()
            .replace(/[-_ ]?\d+$/, '');
        } catch {
          continue;
        }
      }
      out.set(key, (out.get(key) ?? 0) + cpuSeconds(pid, Number(tid)));
    }
  } catch {
    // the process is gone
  }
  return out;
}

/** `load` on the service, with its CPU per request. */
async function loadService(
  pid: number | undefined,
  url: string,
  t: Target,
  o: {
    seconds: number;
    warmup?: number;
    connections: number;
    token?: string;
    tokens?: string[];
    threadMap?: string;
    pgDataDir: string;
    databaseUrl: string;
  },
): Promise<ExternalMeasure> {
  resetPeakRss(pid);
  const deadlocksBefore = await deadlocks(o.databaseUrl);
  await warmUp(url, t, o);
  const before = pid
    ? {
        main: cpuSeconds(pid, pid),
        all: cpuSeconds(pid),
        pg: cpuSnapshot(undefined, o.pgDataDir).postgres,
        threads: o.threadMap ? threadCpu(pid, o.threadMap) : undefined,
      }
    : undefined;
  const m = await load(url, t, o);
  if (!pid || !before) return m;
  const requests = m.reqPerSec * o.seconds;
  const per = (s: number): number => (requests > 0 ? Math.round((s * 1000 * 100) / requests) / 100 : 0);
  const measured: ExternalMeasure = {
    ...m,
    cpuMsPerRequest: {
      mainThread: per(cpuSeconds(pid, pid) - before.main),
      process: per(cpuSeconds(pid) - before.all),
    },
    postgresCpuUsPerReq: Math.round(per(cpuSnapshot(undefined, o.pgDataDir).postgres - before.pg) * 1000),
  };
  const after = await settle(pid, o.pgDataDir);
  measured.settled = { ...after, cpuMsPerRequest: { process: per(cpuSeconds(pid) - before.all) } };
  measured.peakRssMb = peakRssMb(pid);
  measured.postgresDeadlocks = (await deadlocks(o.databaseUrl)) - deadlocksBefore;
  if (before.threads) {
    const byThread: Record<string, number> = {};
    for (const [name, s] of [...threadCpu(pid, o.threadMap)].sort((a, b) => b[1] - a[1])) {
      const ms = per(s - (before.threads.get(name) ?? 0));
      if (ms > 0) byThread[name] = ms;
    }
    measured.cpuMsPerRequestByThread = byThread;
  }
  return measured;
}

/** Deadlocks PostgreSQL has detected in this database so far (`pg_stat_database`). */
async function deadlocks(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select deadlocks as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * Waits until the service and PostgreSQL are quiet again after a measurement: each one's CPU over a
 * 500 ms window below a tenth of one core, at most `maxMs`. What the service spent meanwhile was caused by the load just
 * measured (garbage, deferred work of the requests), so it is charged to that endpoint's CPU per
 * request; the next endpoint starts from a quiet service and is not measured against the previous
 * one's aftermath. Returns the seconds waited and the CPU seconds spent.
 */
async function settle(
  pid: number,
  pgDataDir: string,
  maxMs = 30_000,
): Promise<{ seconds: number; cpuSeconds: number }> {
  const start = Date.now();
  const first = cpuSeconds(pid);
  let last = first;
  let lastPg = cpuSnapshot(undefined, pgDataDir).postgres;
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuSeconds(pid);
    const pgNow = cpuSnapshot(undefined, pgDataDir).postgres;
    // PostgreSQL too: after thousands of inserts its autovacuum and checkpointer may still be busy.
    const quiet = now - last < 0.05 && pgNow - lastPg < 0.05;
    last = now;
    lastPg = pgNow;
    if (
      (quiet && Date.now() - start >= Number(process.env.BENCH_SETTLE_MIN_MS ?? 0)) ||
      Date.now() - start > maxMs ||
      Number.isNaN(now)
    ) {
      return {
        seconds: Math.round((Date.now() - start) / 100) / 10,
        cpuSeconds: Math.round((now - first) * 100) / 100,
      };
    }
  }
}

/** CPU seconds a process has used, all its threads (utime + stime; with `reaped`, its waited-for children too). */
export function processCpuSeconds(pid: number, reaped = false): number {
  try {
    // Fields after the command (which may hold spaces) start at the state, field 3.
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.split(' ') ?? [];
    const at = (field: number): number => Number(f[field - 3] ?? 0);
    return (at(14) + at(15) + (reaped ? at(16) + at(17) : 0)) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds used so far by the service process and by the PostgreSQL server (postmaster, its
 * live backends and those it has reaped): on a shared machine, where req/s and latencies swing
 * with other jobs, CPU per request is what compares across runs.
 */
export function cpuSnapshot(servicePid: number | undefined, pgDataDir: string): { service: number; postgres: number } {
  let postgres: number;
  try {
    const postmaster = Number(fs.readFileSync(path.join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    postgres = processCpuSeconds(postmaster, true);
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const f = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ').pop()?.split(' ') ?? [];
        if (Number(f[1]) === postmaster) postgres += processCpuSeconds(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    postgres = 0;
  }
  return { service: servicePid ? processCpuSeconds(servicePid) : 0, postgres };
}

/**
 * Starts a new peak-RSS window for `pid` (writing 5 to clear_refs resets VmHWM to the current
 * RSS, Linux ≥ 4.0), so that each endpoint's peak is its own and not the start-up's or another
 * endpoint's set-up (e.g. the password hashing of provisioning 32 merchants).
 */
function resetPeakRss(pid: number | undefined): void {
  if (!pid) return;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Not allowed here: the peak stays the whole run's, which only overstates it.
  }
}

function peakRssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/**
 * How `npm start` runs node (package.json: `[VAR=value …] node <options> src/cli/start.ts`): its
 * environment assignments and node's options, so the service measured here runs exactly as
 * `npm start` runs it (V8 flags, malloc arenas, loader; docs/performance.md "Memory").
 */
export function npmStartLaunch(): { env: Record<string, string>; nodeOptions: string[] } {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  // `exec env …`: the shell npm runs the script with is replaced by node, so a signal sent to
  // npm start's process reaches the service itself (README "Commands").
  if (words[0] === 'exec' && words[1] === 'env') words.splice(0, 2);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const w = words.shift() ?? '';
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  }
  if (words[0] !== 'node' || words[words.length - 1] !== 'src/cli/start.ts') {
    throw new Error(
      `package.json "start" is not "[exec env] [VAR=value …] node <options> src/cli/start.ts": ${pkg.scripts.start}`,
    );
  }
  return { env, nodeOptions: words.slice(1, -1) };
}

function startChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  tag: string,
  nodeOptions: string[] = ['--import', 'tsx'],
): ChildProcess {
  const child = spawn(process.execPath, [...nodeOptions, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept for a failure report only; the run itself prints nothing of the children.
  let tail = '';
  const keep = (d: Buffer): void => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // BENCH_SERVICE_LOG=<file>: the service's whole output, e.g. with BENCH_SERVICE_NODE_FLAGS=--trace-gc.
  const logFile = tag === 'service' ? process.env.BENCH_SERVICE_LOG : undefined;
  if (logFile) {
    const out = fs.createWriteStream(logFile);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  child.on('exit', (code) => {
    if ((code && code !== 0) || process.env.BENCH_TAIL) console.error(`${tag} exited with ${code}:\n${tail}`);
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function runExternalBench(o: {
  seconds: number;
  connections: number;
  /** Seconds of unmeasured load before each measured one, baseline and service alike (`warmUp`). */
  warmup?: number;
  deepList?: boolean;
  cpuProfDir?: string;
  /** Only the endpoints whose name contains this text (a profile of one path). */
  only?: string;
}): Promise<ExternalBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-'));
  fs.chmodSync(dir, 0o755);
  progress('starting PostgreSQL for the benchmark');
  // BENCH_PG_LOG=<file>: PostgreSQL's own log (deadlocks, with the statements involved).
  const pgLog = process.env.BENCH_PG_LOG;
  const db = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    persistent: false,
    database: 'pixflow_bench',
    ...(pgLog ? { onLog: (line: string) => fs.appendFileSync(pgLog, line) } : {}),
  });
  const children: ChildProcess[] = [];
  // The durable baseline's Temporal server, in its own process, for POST /v1/charges only.
  const durable = !o.deepList && (!o.only || 'POST /v1/charges'.includes(o.only));
  const temporal = durable ? await startTemporalProcess() : undefined;
  try {
    const baselinePort = await freePort();
    const baseline = startChild(
      [path.join(ROOT, 'bench/baseline-server.ts')],
      {
        ...process.env,
        // The bare insert makes its own table, so it connects as the owner role.
        DATABASE_URL: db.ownerUrl,
        PORT: String(baselinePort),
        ...(temporal ? { BASELINE_TEMPORAL_ADDRESS: temporal.address } : {}),
      },
      'baseline',
    );
    children.push(baseline);

    const port = await freePort();
    const threadMap = path.join(dir, 'threads.txt');
    const admin = { email: 'bench-admin@bench.test', password: 'bench-admin-password' };
    const launch = npmStartLaunch();
    const service = startChild(
      [
        ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []),
        ...(process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
        path.join(ROOT, 'src/cli/start.ts'),
      ],
      {
        ...process.env,
        ...launch.env,
        NODE_ENV: 'development',
        DATABASE_URL: db.url,
        DATABASE_MIGRATION_URL: db.ownerUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: path.join(dir, 'data'),
        LOG_LEVEL: 'warn',
        ADMIN_EMAIL: admin.email,
        ADMIN_PASSWORD: admin.password,
        // The load comes from one credential: the per-credential limit would measure the limiter.
        RATE_LIMIT_RPS: '1000000',
        RATE_LIMIT_BURST: '1000000',
        RATE_LIMIT_ADDRESS_RPS: '1000000',
        RATE_LIMIT_ADDRESS_BURST: '1000000',
        ...(o.deepList ? { CHARGE_LIST_CACHE_MS: '0' } : {}),
        PIXFLOW_THREAD_MAP: threadMap,
      },
      'service',
      launch.nodeOptions,
    );
    children.push(service);
    const base = `http://127.0.0.1:${port}`;
    progress('waiting for the service (npm start) and the baseline server');
    await until('the service', 120_000, async () => (await fetch(`${base}/readyz`)).ok);
    await until('the baseline', 30_000, async () => (await fetch(`http://127.0.0.1:${baselinePort}/`)).status === 404);
    progress('provisioning a merchant and its API key');
    const { merchantId, apiKey } = await provision(base, admin);
    const cpus = os.cpus();
    const machine = {
      cpus: cpus.length,
      model: cpus[0]?.model ?? 'unknown',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    };
    let setupPeak = 0;
    if (o.deepList) {
      const n = 1_000_000;
      await seedCharges(db.superuserUrl, merchantId, n);
      setupPeak = peakRssMb(service.pid);
      const connections = 16;
      const deep: ExternalMeasure[] = [];
      // Pages 485 to 500: 500 is the deepest page of 20 the API answers (page × limit ≤ 10,000).
      const pages = (query: string): string[] =>
        Array.from({ length: connections }, (_, i) => `/v1/charges?limit=20${query}&page=${500 - i}`);
      const deepTargets: Target[] = [
        ...[
          '/v1/charges?limit=20',
          '/v1/charges?limit=20&page=500',
          '/v1/charges?limit=20&status=PAID',
          '/v1/charges?limit=20&status=PAID&page=500',
        ].map((p): Target => ({ endpoint: `GET ${p}`, method: 'GET', path: p })),
        // Every connection its own page (485 to 500): no two requests in flight ask for the same
        // page, so what a turn's reads share is the statement, never a page
        // (docs/performance.md "Where a read's time goes", one statement per turn).
        ...['', '&status=PAID'].map((q): Target => ({
          endpoint: `GET /v1/charges?limit=20${q}&page=${501 - connections}…500, one page per connection`,
          method: 'GET',
          path: `/v1/charges?limit=20${q}&page=500`,
          paths: pages(q),
        })),
      ];
      for (const target of deepTargets) {
        const p = target.path;
        resetPeakRss(service.pid);
        progress(`measuring ${target.endpoint} (${o.seconds} s)`);
        await warmUp(`${base}${p}`, target, { warmup: o.warmup, connections, token: apiKey });
        const before = cpuSnapshot(service.pid, path.join(dir, 'pg'));
        const m = await load(`${base}${p}`, target, { seconds: o.seconds, connections, token: apiKey });
        const after = cpuSnapshot(service.pid, path.join(dir, 'pg'));
        const n = Math.max(1, m.reqPerSec * o.seconds);
        deep.push({
          ...m,
          serviceCpuUsPerReq: Math.round(((after.service - before.service) * 1e6) / n),
          postgresCpuUsPerReq: Math.round(((after.postgres - before.postgres) * 1e6) / n),
          peakRssMb: peakRssMb(service.pid),
        });
      }
      return {
        date: new Date().toISOString(),
        machine,
        seconds: o.seconds,
        warmupSeconds: o.warmup ?? 0,
        connections: o.connections,
        rows: [],
        servicePeakRssMb: Math.max(0, ...deep.map((x) => x.peakRssMb ?? 0)),
        serviceSetupPeakRssMb: setupPeak,
        deepList: { charges: n, connections, rows: deep },
      };
    }

    const targets: Target[] = [
      {
        endpoint: 'POST /v1/charges',
        method: 'POST',
        path: '/v1/charges',
        body: { amount: 1990, description: 'Bench charge', expiresIn: 3600 },
      },
      { endpoint: 'GET /v1/merchants/me', method: 'GET', path: '/v1/merchants/me' },
      { endpoint: 'GET /v1/merchants/me/balance', method: 'GET', path: '/v1/merchants/me/balance' },
      // The same read with each connection a different merchant: no two reads in flight are of one
      // merchant, so a turn's batch of reads (docs/performance.md "Where a read's time goes", one statement per turn) is
      // one statement for many merchants, never one merchant's read shared.
      {
        endpoint: `GET /v1/merchants/me/balance, ${o.connections} merchants`,
        method: 'GET',
        path: '/v1/merchants/me/balance',
        merchants: o.connections,
      },
      { endpoint: 'GET /v1/charges?limit=20', method: 'GET', path: '/v1/charges?limit=20' },
    ];
    const baselineTarget: Target = {
      endpoint: 'baseline POST /insert',
      method: 'POST',
      path: '/insert',
      body: { amount: 1990, description: 'Bench charge' },
    };
    const rows: ExternalRow[] = [];
    setupPeak = peakRssMb(service.pid);
    const tokens = [apiKey];
    for (const t of targets.filter((x) => !o.only || x.endpoint.includes(o.only))) {
      // The other merchants of a many-merchant target, four at a time, right before it: their
      // set-up (password hashing, PIX key workflows) is not part of any other endpoint's load.
      if (tokens.length < (t.merchants ?? 0)) progress(`provisioning ${t.merchants ?? 0} merchants`);
      while (tokens.length < (t.merchants ?? 0)) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(4, (t.merchants ?? 0) - tokens.length) }, () => provision(base, admin)),
        );
        tokens.push(...batch.map((b) => b.apiKey));
      }
      progress(`measuring ${t.endpoint} and the baseline (${o.seconds} s each, after warm-up)`);
      const baselineUrl = `http://127.0.0.1:${baselinePort}${baselineTarget.path}`;
      await warmUp(baselineUrl, baselineTarget, o);
      const b = await load(baselineUrl, baselineTarget, o);
      const s = await loadService(service.pid, `${base}${t.path}`, t, {
        ...o,
        token: apiKey,
        tokens,
        threadMap,
        pgDataDir: path.join(dir, 'pg'),
        databaseUrl: db.url,
      });
      const ratioTo = (x: ExternalMeasure): number =>
        b.reqPerSec > 0 ? Math.round((x.reqPerSec / b.reqPerSec) * 1000) / 1000 : 0;
      const row: ExternalRow = { endpoint: t.endpoint, service: s, baseline: b, ratio: ratioTo(s) };
      if (temporal && t.endpoint === 'POST /v1/charges') {
        const d = { ...baselineTarget, endpoint: 'baseline POST /insert-and-start', path: '/insert-and-start' };
        const url = `http://127.0.0.1:${baselinePort}${d.path}`;
        await warmUp(url, d, o);
        row.durableBaseline = await load(url, d, o);
        row.durableRatio = ratioTo(row.durableBaseline);
      }
      rows.push(row);
    }
    const servicePeakRssMb = Math.max(0, ...rows.map((x) => x.service.peakRssMb ?? 0));
    return {
      date: new Date().toISOString(),
      machine,
      seconds: o.seconds,
      warmupSeconds: o.warmup ?? 0,
      connections: o.connections,
      rows,
      servicePeakRssMb,
      serviceSetupPeakRssMb: setupPeak,
    };
  } finally {
    for (const c of children.reverse()) await stopChild(c);
    await temporal?.stop();
    await db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatExternalBench(r: ExternalBenchResult): string {
  const lines = [
    `${r.date.slice(0, 10)}, ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}; autocannon ${r.connections} connections, ${r.seconds} s each after ${r.warmupSeconds ?? 0} s of warm-up`,
    '',
    '| endpoint | req/s | p50 ms | p99 ms | non-2xx | baseline req/s | baseline p99 ms | ratio | CPU ms/req (main thread / process) | machine CPU ms/req (service / baseline) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| \`${x.endpoint}\` | ${x.service.reqPerSec} | ${x.service.p50Ms} | ${x.service.p99Ms} | ${x.service.non2xx + x.service.errors} | ${x.baseline.reqPerSec} | ${x.baseline.p99Ms} | ${x.ratio} | ${x.service.cpuMsPerRequest ? `${x.service.cpuMsPerRequest.mainThread} / ${x.service.cpuMsPerRequest.process}` : '—'} | ${x.service.machineCpuMsPerRequest ?? '—'} / ${x.baseline.machineCpuMsPerRequest ?? '—'} |`,
    ),
    ...r.rows
      .filter((x) => x.durableBaseline)
      .map(
        (x) =>
          `\nThe bare insert followed by a durable workflow start (\`/insert-and-start\`, measured after \`${x.endpoint}\`): ${x.durableBaseline?.reqPerSec} req/s, p99 ${x.durableBaseline?.p99Ms} ms, ratio ${x.durableRatio} to the bare insert, machine CPU ${x.durableBaseline?.machineCpuMsPerRequest ?? '—'} ms/req.`,
      ),
    '',
    'After each load the next waits for the service and PostgreSQL to be quiet again (each below a tenth of a core over 500 ms); what the service spent until then is charged to the endpoint just measured:',
    '',
    ...r.rows.map(
      (x) =>
        `- \`${x.endpoint}\`: quiet after ${x.service.settled?.seconds ?? '—'} s, ${x.service.settled?.cpuSeconds ?? '—'} CPU s meanwhile; process CPU ms/req with it ${x.service.settled?.cpuMsPerRequest.process ?? '—'}`,
    ),
    '',
    `PostgreSQL CPU µs per service request: ${r.rows.map((x) => `\`${x.endpoint}\` ${x.service.postgresCpuUsPerReq ?? '—'}`).join(', ')}`,
    '',
    `PostgreSQL deadlocks during each endpoint's warm-up and load: ${r.rows.map((x) => `\`${x.endpoint}\` ${x.service.postgresDeadlocks ?? '—'}`).join(', ')}`,
    '',
    "Service CPU ms per request by thread (main; our worker threads by name; `node`: other JavaScript threads such as the SDK's workflow thread; the rest by their OS name):",
    '',
    ...r.rows.map(
      (x) =>
        `- \`${x.endpoint}\`: ${Object.entries(x.service.cpuMsPerRequestByThread ?? {})
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    '',
    `Service peak RSS during the loads: ${r.servicePeakRssMb} MB (by endpoint: ${[
      ...r.rows.map((x) => [x.endpoint, x.service.peakRssMb] as const),
      ...(r.deepList?.rows ?? []).map((x) => [x.endpoint, x.peakRssMb] as const),
    ]
      .map(([e, mb]) => `\`${e}\` ${mb ?? '—'}`)
      .join(', ')}); from start-up to the first load: ${r.serviceSetupPeakRssMb ?? '—'} MB`,
  ];
  if (r.deepList) {
    lines.push(
      '',
      `GET /v1/charges, ${r.deepList.charges.toLocaleString('en')} charges for one merchant, list cache off, ${r.deepList.connections} connections:`,
      '',
      '| request | req/s | p50 ms | p99 ms | non-2xx | service CPU µs/req | PostgreSQL CPU µs/req |',
      '|---|---|---|---|---|---|---|',
      ...r.deepList.rows.map(
        (x) =>
          `| \`${x.endpoint}\` | ${x.reqPerSec} | ${x.p50Ms} | ${x.p99Ms} | ${x.non2xx + x.errors} | ${x.serviceCpuUsPerReq ?? '—'} | ${x.postgresCpuUsPerReq ?? '—'} |`,
      ),
    );
  }
  return lines.join('\n');
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

if (require.main === module) {
  const outIndex = process.argv.indexOf('--out');
  const out = outIndex >= 0 ? process.argv[outIndex + 1] : undefined;
  const profIndex = process.argv.indexOf('--cpu-prof');
  const cpuProfDir = profIndex >= 0 ? path.resolve(process.argv[profIndex + 1] ?? '.') : undefined;
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex >= 0 ? process.argv[onlyIndex + 1] : undefined;
  const warmupIndex = process.argv.indexOf('--warmup');
  const warmup = warmupIndex >= 0 ? Number(process.argv[warmupIndex + 1]) : DEFAULT_WARMUP_SECONDS;
  if (!Number.isFinite(warmup) || warmup < 0) throw new Error('--warmup takes a number of seconds ≥ 0');
  runExternalBench({
    seconds: arg('seconds', 8),
    warmup,
    connections: arg('connections', 32),
    deepList: process.argv.includes('--deep-list'),
    cpuProfDir,
    only,
  })
    .then((r) => {
      console.log(formatExternalBench(r));
      if (out) fs.writeFileSync(out, `${JSON.stringify(r, null, 2)}\n`);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
