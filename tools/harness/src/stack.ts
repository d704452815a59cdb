/**
 * A production-shaped stack of real child processes for the reliability suites and benchmarks:
 * the official Temporal dev server (`temporal server start-dev`, real time, its own process; behind
 * a TLS endpoint when asked, tools/harness/src/temporal-tls-proxy.ts),
 * `src/cli/api.ts` and `src/cli/worker.ts` started as many times as a test wants, all against one
 * PostgreSQL (the run's, or one the caller passes), and the acquirer simulator in this process
 * (so tests count transfers and drive outcomes through its control surface). Each process is
 * spawned as `node --import tsx <entry>` — no npm or tsx wrapper — so SIGKILL hits the process
 * itself.
 *
 *   const stack = await startStack({ databaseUrl });
 *   const api = await stack.startApi();
 *   const worker = await stack.startWorker();
 *   await worker.kill();                       // SIGKILL
 *   await stack.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../src/db/embedded-postgres';
import { SIMULATOR_CLIENT } from '../../../src/acquirer';
import { startAcquirerSimulator, type RunningSimulator } from '../../../src/acquirer/simulator/server';
import { createLogger } from '../../../src/lib/logger';
import { startLocalTemporal } from '../../../src/temporal/local-server';
import { onRunEnd } from '../../../test/support/lifecycle';
import { startTlsProxy, type TlsProxyOptions } from './temporal-tls-proxy';

const ROOT = path.resolve(__dirname, '../../..');

export const STACK_ADMIN = { email: 'admin@pixflow.test', password: 'admin-password-123' };

export interface Proc {
  name: string;
  child: ChildProcess;
  output: string[];
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful drain), resolved with the exit code. */
  stop(): Promise<number | null>;
  alive(): boolean;
}

export interface ApiProc extends Proc {
  url: string;
  port: number;
}

export interface Stack {
  databaseUrl: string;
  temporalAddress: string;
  /** The Temporal server's process id (for CPU accounting in benchmarks). */
  temporalPid: number;
  taskQueue: string;
  simulator: RunningSimulator;
  /** Environment every api/worker process gets (before per-process overrides). */
  env: NodeJS.ProcessEnv;
  startApi(extraEnv?: NodeJS.ProcessEnv): Promise<ApiProc>;
  startWorker(extraEnv?: NodeJS.ProcessEnv): Promise<Proc>;
  /** SIGTERM to every api and worker process, then the Temporal server; closes the simulator. */
  stop(): Promise<void>;
}

export interface StackOptions {
  databaseUrl: string;
  /** Extra environment for every api and worker process. */
  env?: NodeJS.ProcessEnv;
  simulator?: {
    transferDelayMs?: number;
    autoComplete?: boolean;
    /** HTTPS (and mTLS with clientCa) at the simulator, as a real acquirer. */
    tls?: { cert: Buffer; key: Buffer; clientCa?: Buffer };
  };
  /** A TLS endpoint (and API key check) in front of the dev server, as a secured cluster. */
  temporalSecurity?: Pick<TlsProxyOptions, 'tls' | 'apiKey'>;
}

/** The official dev server of a stack or benchmark, in its own process. */
export interface TemporalProcess {
  /** Where clients connect: the dev server, or the TLS endpoint in front of it. */
  address: string;
  pid: number;
  stop(): Promise<void>;
}

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A Node child process of the stack (`node <args>` from the repository's root), output kept. */
export function spawnProc(name: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  // HARNESS_CPU_PROF_DIR=<dir>: every process of the stack writes a V8 CPU profile there when it
  // exits (docs/performance.md "Running the benchmarks"), one folder per process (a file per thread).
  const profDir = process.env.HARNESS_CPU_PROF_DIR;
  const profile = profDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profDir, name)}`] : [];
  const child = spawn(process.execPath, [...profile, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (d: Buffer): void => {
    output.push(d.toString());
    if (output.length > 20_000) output.splice(0, output.length - 20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: Proc = {
    name,
    child,
    output,
    alive,
    kill: async () => {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (alive()) child.kill('SIGTERM');
      const timer = setTimeout(() => alive() && child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  onRunEnd(() => proc.kill());
  return proc;
}

/**
 * The official dev server in its own process (real time, headless, its SQLite file under
 * `dataDir`), once it answers; with `security`, clients reach it through a TLS endpoint.
 */
export async function startTemporalProcess(
  opts: { dataDir?: string; security?: Pick<TlsProxyOptions, 'tls' | 'apiKey'> } = {},
): Promise<TemporalProcess> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-temporal-'));
  const server = await startLocalTemporal({ dataDir, logger: createLogger({ level: 'silent' }), ui: false });
  onRunEnd(() => server.stop());
  const proxy = opts.security
    ? await startTlsProxy({ upstream: server.address, warn: () => undefined, ...opts.security })
    : undefined;
  return {
    address: proxy?.address ?? server.address,
    pid: server.pid,
    stop: async () => {
      await proxy?.close();
      await server.stop();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-stack-'));
  const procs: Proc[] = [];
  const temporal = await startTemporalProcess({
    dataDir: path.join(dataDir, 'temporal-server'),
    security: opts.temporalSecurity,
  });
  const temporalAddress = temporal.address;
  const callbackSecret = crypto.randomBytes(24).toString('hex');
  const simulator = await startAcquirerSimulator({
    callbackSecret,
    transferDelayMs: opts.simulator?.transferDelayMs ?? 200,
    autoComplete: opts.simulator?.autoComplete ?? true,
    keyActivationDelayMs: 100,
    ...SIMULATOR_CLIENT,
    ...(opts.simulator?.tls ? { tls: opts.simulator.tls } : {}),
  });
  const taskQueue = `reliability-${crypto.randomUUID()}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'development',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TEMPORAL_LOG_LEVEL: 'ERROR',
    DATABASE_URL: opts.databaseUrl,
    DATABASE_POOL_MAX: '5',
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    ACQUIRER_URL: simulator.url,
    ACQUIRER_SANDBOX: 'true',
    ACQUIRER_CALLBACK_SECRET: callbackSecret,
    JWT_SECRET: 'reliability-jwt-secret-0123456789abcdef0123',
    API_KEY_PEPPER: 'reliability-pepper-0123456789abcdef',
    ADMIN_EMAIL: STACK_ADMIN.email,
    ADMIN_PASSWORD: STACK_ADMIN.password,
    // Every process talks from 127.0.0.1 into the shared rate_limits table (docs/api.md "Rate limits").
    RATE_LIMIT_ADDRESS_RPS: '1000000',
    RATE_LIMIT_ADDRESS_BURST: '1000000',
    AUTH_FAILURES_PER_ADDRESS: '1000000',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000',
    // The run's database holds other suites' rows: the reconcilers would start (and this stack's
    // workers run) workflows for them. Workflows here survive on the Temporal server alone.
    RECONCILER: 'off',
    RATE_LIMIT_RPS: '1000',
    RATE_LIMIT_BURST: '1000',
    ...opts.env,
  };
  let apiCount = 0;
  let workerCount = 0;
  return {
    databaseUrl: opts.databaseUrl,
    temporalAddress,
    temporalPid: temporal.pid,
    taskQueue,
    simulator,
    env,
    async startApi(extraEnv = {}) {
      const port = await freePort();
      const proc = spawnProc(`api-${++apiCount}`, ['--import', 'tsx', 'src/cli/api.ts'], {
        ...env,
        PORT: String(port),
        ...extraEnv,
      });
      procs.push(proc);
      const url = `http://127.0.0.1:${port}`;
      await waitUntil(
        async () => (await fetch(`${url}/readyz`)).status === 200,
        120_000,
        `${proc.name} ready`,
        250,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${proc.output.join('')}`);
      });
      // Acquirer callbacks go to the first API started (any would do: they share everything).
      if (apiCount === 1) simulator.control.setCallbackBaseUrl(url);
      return { ...proc, url, port };
    },
    async startWorker(extraEnv = {}) {
      const proc = spawnProc(`worker-${++workerCount}`, ['--import', 'tsx', 'src/cli/worker.ts'], {
        ...env,
        ...extraEnv,
      });
      procs.push(proc);
      // The worker prints its start-up table once it polls (after bundling the workflow code).
      await waitUntil(
        () => /task queue/.test(proc.output.join('')) || !proc.alive(),
        180_000,
        `${proc.name} polling`,
        250,
      );
      if (!proc.alive()) throw new Error(`${proc.name} exited:\n${proc.output.join('')}`);
      return proc;
    },
    async stop() {
      await Promise.all(procs.map((p) => p.stop()));
      await temporal.stop();
      await simulator.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
