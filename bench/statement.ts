/**
 * The merchant's statement at scale (docs/performance.md "The statement"), beside the bare insert
 * baseline (bench/baseline-server.ts) on the same PostgreSQL, each server in its own process, all on
 * 127.0.0.1:
 *
 *   - seed: one merchant with `--entries` statement lines (default 1,000,000): charges paid
 *     (a CHARGE_PAID and a FEE line) and settled (a SETTLEMENT line), three lines per charge, the
 *     last 5,000 charges within the last ~1.4 hours, the others 15 s apart before that (≈ 57 days
 *     for a million lines). Seeded set-based, as PostgreSQL's superuser: one
 *     `INSERT … SELECT … FROM generate_series` for the transactions and one for the postings per
 *     batch of 100,000 charges, with `session_replication_role = replica` so that the ledger's
 *     per-row triggers (zero sum, posted, has postings) do not run row by row; the accounts'
 *     `balance` and `posted` are then set to their postings' sums, as the ledger would have left
 *     them, the statement lines the ledger's trigger would have written are inserted from the
 *     postings by the migration's own SQL, and the tables are VACUUM ANALYZEd;
 *   - the CSV of the whole range (every line), read as fast as the client takes it: lines per
 *     second, and the service's RSS growth over its RSS before (sampled every 50 ms);
 *   - a page at depth: GET /v1/merchants/me/statement?limit=100&page=100 (lines 9,901–10,000, the
 *     deepest page served) over the range of the recent charges (≈ 15,000 lines), by autocannon in
 *     its own process, 1 and 8 connections;
 *   - the bare insert (POST /insert of the baseline server), 8 connections, for scale.
 *
 *   npx tsx bench/statement.ts [--entries 1000000] [--seconds 5] [--out bench/results-statement.json]
 *   npx tsx bench/statement.ts --smoke      (30,000 lines, 2 s loads: proves the bench runs)
 *
 * Targets (docs/performance.md "The statement"): ≥ 100,000 lines/s and < 50 MB RSS growth for
 * the CSV of 1,000,000 lines; p99 < 20 ms for the page at depth.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createKnex } from '../src/db/knex';
import { migrateLatest } from '../src/db/migrate';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { stderrProgress } from '../src/process/progress';
import { todayInStatementZone } from '../src/services/ledger/statement';
import { LINES as STATEMENT_LINES } from '../migrations/20261202100100_statement_lines';

const ROOT = path.resolve(__dirname, '..');
const run = promisify(execFile);
const progress = stderrProgress('bench');
/** Charges whose lines fall in the last ~1.4 hours: the range of the page at depth. */
const RECENT_CHARGES = 5_000;
const SEED_BATCH = 100_000;

export interface LoadMeasure {
  endpoint: string;
  connections: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

export interface StatementBenchResult {
  date: string;
  machine: { cpus: number; model: string; node: string };
  entries: number;
  seedSeconds: number;
  csv: { lines: number; bytes: number; seconds: number; linesPerSec: number; rssBeforeMb: number; rssGrowthMb: number };
  depthPage: { range: { from: string; to: string; total: number }; loads: LoadMeasure[] };
  baseline: LoadMeasure;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function startChild(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  // BENCH_CPU_PROF_DIR=<dir> writes each child's V8 CPU profile there (docs/performance.md "The statement").
  const prof = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer): void => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code) => {
    if (code && code !== 0) console.error(`${script} exited with ${code}:\n${tail}`);
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

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
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
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A merchant made through the admin API, and its user's JWT. */
async function provision(base: string, admin: { email: string; password: string }) {
  const { token: adminToken } = await call<{ token: string }>(base, 'POST', '/v1/auth/login', admin);
  const email = `bench-${Date.now()}@bench.test`;
  const password = 'bench-password-1';
  const { merchant } = await call<{ merchant: { id: string } }>(
    base,
    'POST',
    '/v1/admin/merchants',
    { name: 'Statement bench', document: '52998224725', email, password },
    adminToken,
  );
  const { token } = await call<{ token: string }>(base, 'POST', '/v1/auth/login', { email, password });
  return { merchantId: merchant.id, token };
}

/** The ledger of `charges` paid and settled charges, set-based (see the header). */
export async function seedLedger(superuserUrl: string, merchantId: string, charges: number): Promise<void> {
  const client = new pg.Client({ connectionString: superuserUrl });
  await client.connect();
  try {
    await client.query("set session_replication_role = 'replica'");
    const kinds = ['acquirer', 'available', 'fee_revenue', 'pending'];
    const acc = Object.fromEntries(kinds.map((k) => [k, `acc_seed_${k}_${merchantId}`]));
    for (const k of kinds) {
      await client.query(
        'insert into ledger_accounts (id, merchant_id, kind, balance) values ($1, $2, $3, 0) on conflict do nothing',
        [acc[k], merchantId, k],
      );
    }
    // g's moment: the last RECENT_CHARGES charges one second apart up to now, the others 15 s
    // apart before that; a settlement half a second after its payment.
    const at = (
      total: string,
    ): string => `(case when g > ${total} - ${RECENT_CHARGES} then now() - make_interval(secs => ${total} - g)
      else now() - interval '2 hours' - make_interval(secs => (${total} - ${RECENT_CHARGES} - g) * 15) end)`;
    for (let from = 1; from <= charges; from += SEED_BATCH) {
      const to = Math.min(charges, from + SEED_BATCH - 1);
      progress(
        `seeding charges ${from.toLocaleString('en')}–${to.toLocaleString('en')} of ${charges.toLocaleString('en')}`,
      );
      await client.query(
        `insert into ledger_transactions (id, reference, kind, merchant_id, metadata, created_at)
         select 'ltx_seed_' || g || '_' || s.step, 'charge:ch_seed' || g || ':' || s.step,
                case s.step when 'paid' then 'charge_paid' else 'charge_settled' end, $1,
                case s.step when 'paid'
                  then jsonb_build_object('chargeId', 'ch_seed' || g, 'amount', 1000 + g % 9000, 'fee', (1000 + g % 9000) / 100)
                  else jsonb_build_object('chargeId', 'ch_seed' || g) end,
                ${at('$4')} + case s.step when 'paid' then interval '0' else interval '500 milliseconds' end
         from generate_series($2::int, $3::int) g cross join (values ('paid', 1), ('settled', 2)) s(step, n)
         order by g, s.n`,
        [merchantId, from, to, charges],
      );
      await client.query(
        `insert into ledger_postings (transaction_id, account_id, amount, created_at)
         select 'ltx_seed_' || g || '_' || p.step, p.account, p.amount, ${at('$3')}
         from generate_series($1::int, $2::int) g
         cross join lateral (select 1000 + g % 9000 as amount, (1000 + g % 9000) / 100 as fee) c
         cross join lateral (values
           (1, 'paid', $4, -c.amount), (2, 'paid', $5, c.amount - c.fee), (3, 'paid', $6, c.fee),
           (4, 'settled', $5, -(c.amount - c.fee)), (5, 'settled', $7, c.amount - c.fee)) p(n, step, account, amount)
         order by g, p.n`,
        [from, to, charges, acc.acquirer, acc.pending, acc.fee_revenue, acc.available],
      );
    }
    progress('seeding: statement lines, balances, vacuum analyze, checkpoint');
    // The lines the ledger's trigger would have written (it does not run in replica mode).
    await client.query(
      STATEMENT_LINES(`(select id, transaction_id, account_id, amount,
        sum(amount) over (partition by account_id order by id rows between unbounded preceding and current row) as after
      from ledger_postings where account_id in (${Object.values(acc)
        .map((id) => `'${id}'`)
        .join(', ')}))`),
    );
    await client.query(
      `update ledger_accounts a set balance = s.sum, posted = s.sum
       from (select account_id, sum(amount) as sum from ledger_postings where account_id = any($1) group by account_id) s
       where a.id = s.account_id`,
      [Object.values(acc)],
    );
    await client.query('vacuum analyze ledger_transactions');
    await client.query('vacuum analyze ledger_postings');
    await client.query('vacuum analyze ledger_accounts');
    await client.query('vacuum analyze ledger_statement_lines');
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The CSV of the whole range, read as it comes, with the service's RSS sampled meanwhile. */
async function measureCsv(base: string, token: string, pid: number | undefined, range: { from: string; to: string }) {
  const url = `${base}/v1/merchants/me/statement.csv?from=${range.from}&to=${range.to}`;
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 50);
  const started = process.hrtime.bigint();
  let lines = 0;
  let bytes = 0;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200 || !res.body) throw new Error(`GET ${url} → ${res.status}`);
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  peak = Math.max(peak, rssMb(pid));
  const dataLines = lines - 1;
  return {
    lines: dataLines,
    bytes,
    seconds: Math.round(seconds * 100) / 100,
    linesPerSec: Math.round(dataLines / seconds),
    rssBeforeMb: Math.round(before),
    rssGrowthMb: Math.round((peak - before) * 10) / 10,
  };
}

interface AutocannonJson {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
}

/** autocannon in its own process, as bench/external.ts runs it. */
async function load(
  url: string,
  o: { endpoint: string; method: 'GET' | 'POST'; connections: number; seconds: number; token?: string },
): Promise<LoadMeasure> {
  const args = [
    path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '--json',
    '-c',
    String(o.connections),
    '-d',
    String(o.seconds),
    '-m',
    o.method,
    '-H',
    'content-type=application/json',
  ];
  if (o.token) args.push('-H', `authorization=Bearer ${o.token}`);
  if (o.method === 'POST') args.push('-b', '{"bench":true}');
  args.push(url);
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as AutocannonJson;
  return {
    endpoint: o.endpoint,
    connections: o.connections,
    reqPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
  };
}

const dayOf = (d: Date): string => todayInStatementZone(d);

export async function runStatementBench(o: { entries: number; seconds: number }): Promise<StatementBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-statement-bench-'));
  fs.chmodSync(dir, 0o755);
  progress('starting PostgreSQL for the statement benchmark');
  const db = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    persistent: false,
    database: 'pixflow_bench',
  });
  const children: ChildProcess[] = [];
  try {
    const owner = createKnex(db.ownerUrl, 2);
    await migrateLatest(owner);
    await owner.destroy();
    const admin = { email: 'bench-admin@bench.test', password: 'bench-admin-password' };
    const [port, baselinePort] = [await freePort(), await freePort()];
    const service = startChild('bench/statement-server.ts', {
      DATABASE_URL: db.url,
      PORT: String(port),
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
    });
    const baseline = startChild('bench/baseline-server.ts', { DATABASE_URL: db.ownerUrl, PORT: String(baselinePort) });
    children.push(service, baseline);
    const base = `http://127.0.0.1:${port}`;
    await until('the service', 60_000, async () => (await fetch(`${base}/healthz`)).ok);
    await until('the baseline', 30_000, async () => (await fetch(`http://127.0.0.1:${baselinePort}/`)).status === 404);
    const { merchantId, token } = await provision(base, admin);

    const charges = Math.ceil(o.entries / 3);
    const seedStarted = Date.now();
    await seedLedger(db.superuserUrl, merchantId, charges);
    const seedSeconds = Math.round((Date.now() - seedStarted) / 100) / 10;

    const today = todayInStatementZone();
    const recent = { from: dayOf(new Date(Date.now() - (RECENT_CHARGES + 60) * 1000)), to: today };
    const whole = { from: dayOf(new Date(Date.now() - 365 * 86_400_000)), to: today };
    const depthPath = `/v1/merchants/me/statement?from=${recent.from}&to=${recent.to}&limit=100&page=100`;
    const probe = await call<{ total: number }>(base, 'GET', depthPath, undefined, token);

    progress('warming up: a CSV of the recent range');
    await measureCsv(base, token, service.pid, recent);
    progress(`measuring the CSV of ${o.entries.toLocaleString('en')} lines`);
    const csv = await measureCsv(base, token, service.pid, whole);

    const loads: LoadMeasure[] = [];
    for (const connections of [1, 8]) {
      progress(`measuring the page at depth, ${connections} connection(s) (${o.seconds} s)`);
      await load(`${base}${depthPath}`, { endpoint: 'warm-up', method: 'GET', connections, seconds: 1, token });
      loads.push(
        await load(`${base}${depthPath}`, {
          endpoint: `GET ${depthPath}`,
          method: 'GET',
          connections,
          seconds: o.seconds,
          token,
        }),
      );
    }
    progress(`measuring the bare insert (${o.seconds} s)`);
    const baselineUrl = `http://127.0.0.1:${baselinePort}/insert`;
    const baselineLoad = await load(baselineUrl, {
      endpoint: 'POST /insert (bare Koa + pg)',
      method: 'POST',
      connections: 8,
      seconds: o.seconds,
    });
    const cpus = os.cpus();
    return {
      date: new Date().toISOString(),
      machine: { cpus: cpus.length, model: cpus[0]?.model ?? 'unknown', node: process.version },
      entries: o.entries,
      seedSeconds,
      csv,
      depthPage: { range: { ...recent, total: probe.total }, loads },
      baseline: baselineLoad,
    };
  } finally {
    for (const c of children) await stopChild(c);
    await db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatStatementBench(r: StatementBenchResult): string {
  const c = r.csv;
  const rows = [
    `Seeded ${r.entries.toLocaleString('en')} statement lines in ${r.seedSeconds} s (generate_series, set-based)`,
    `CSV of the whole range: ${c.lines.toLocaleString('en')} lines, ${(c.bytes / 2 ** 20).toFixed(1)} MiB in ${c.seconds} s` +
      ` = ${c.linesPerSec.toLocaleString('en')} lines/s (target ≥ 100,000); service RSS ${c.rssBeforeMb} MB before,` +
      ` growth ${c.rssGrowthMb} MB (target < 50)`,
    `Page at depth (lines 9,901–10,000 of ${r.depthPage.range.total.toLocaleString('en')}, ${r.depthPage.range.from}..${r.depthPage.range.to}):`,
    ...[...r.depthPage.loads, r.baseline].map(
      (l) =>
        `  ${l.endpoint}, ${l.connections} conn: ${l.reqPerSec} req/s, p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms` +
        (l.non2xx ? `, ${l.non2xx} non-2xx` : ''),
    ),
  ];
  return rows.join('\n');
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

if (require.main === module) {
  const smoke = process.argv.includes('--smoke');
  const i = process.argv.indexOf('--out');
  const out = i >= 0 ? process.argv[i + 1] : undefined;
  runStatementBench({ entries: arg('entries', smoke ? 30_000 : 1_000_000), seconds: arg('seconds', smoke ? 2 : 5) })
    .then((r) => {
      console.log(formatStatementBench(r));
      if (out) fs.writeFileSync(out, `${JSON.stringify(r, null, 2)}\n`);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
