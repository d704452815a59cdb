/**
 * The Temporal server `npm start` runs when TEMPORAL_ADDRESS is unset (README "What `npm start`
 * runs"): the official Temporal CLI's dev server, `temporal server start-dev`, spawned here from
 * the pinned binary (tools/temporal-binaries), durable on SQLite under DATA_DIR/temporal, with its
 * HTTP API and, unless TEMPORAL_UI=off, the official Web UI. Spawned by us rather than through
 * @temporalio/testing, so we own its pidfile, its readiness wait and its end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { pinnedVersion, temporalBinaryPath } from '../../tools/temporal-binaries/src/binaries';
import { freePort } from '../db/embedded-postgres';
import { endOrphan, endProcess, removePidFile, writePidFile } from './local-server-process';
import { ENTITY_ID_ATTRIBUTE_NAME, MERCHANT_ID_ATTRIBUTE_NAME } from './search-attribute-names';
import { errorMessage } from '../lib/error-message';

export interface LocalTemporal {
  /** gRPC frontend, `127.0.0.1:port`. */
  address: string;
  /** The HTTP API (`/api/v1/…`), `http://127.0.0.1:port`. */
  httpUrl: string;
  /** The official Temporal Web UI, unless it was turned off. */
  uiUrl?: string;
  /** What runs, for the start-up table: "official dev server, temporal CLI 1.9.1". */
  kind: string;
  logFile: string;
  pid: number;
  stop(): Promise<void>;
}

export interface LocalTemporalOptions {
  dataDir: string;
  logger: Logger;
  ui: boolean;
  /** Fixed ports; 0 or unset = a free one picked at each start. */
  port?: number;
  uiPort?: number;
  readyTimeoutMs?: number;
  /** `--dynamic-config-value key=value` pairs (the value as JSON), e.g. a benchmark's rate limits. */
  dynamicConfig?: Record<string, number | string | boolean>;
}

/** A dev server that could not be started: the message names what to read. */
export class LocalTemporalError extends Error {}

const localDir = (dataDir: string): string => path.join(dataDir, 'temporal');
export const localDbFile = (dataDir: string): string => path.join(localDir(dataDir), 'dev-server.db');
export const localPidFile = (dataDir: string): string => path.join(localDir(dataDir), 'dev-server.pid');
export const localLogFile = (dataDir: string): string => path.join(localDir(dataDir), 'dev-server.log');

/**
 * Where `npm start` writes its dev server's address while it runs (a new port each start unless
 * fixed), so `npm run ops -- workflows …` beside it needs no TEMPORAL_ADDRESS.
 */
export function localAddressFile(dataDir: string): string {
  return path.join(localDir(dataDir), 'address');
}

/** The address `npm start` wrote, if one is running under `dataDir`. */
export function readLocalAddress(dataDir: string): string | undefined {
  try {
    return fs.readFileSync(localAddressFile(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

interface Ports {
  grpc: number;
  http: number;
  ui?: number;
}

function devServerArgs(
  dbFile: string,
  ports: Ports,
  dynamicConfig: LocalTemporalOptions['dynamicConfig'] = {},
): string[] {
  const args = ['server', 'start-dev', '--db-filename', dbFile, '--ip', '127.0.0.1'];
  for (const [key, value] of Object.entries(dynamicConfig))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  args.push('--port', String(ports.grpc), '--http-port', String(ports.http));
  args.push(...(ports.ui === undefined ? ['--headless'] : ['--ui-port', String(ports.ui)]));
  // Registered before the first run sets them, so `MerchantId = '…'` is a valid filter on a fresh server.
  for (const name of [MERCHANT_ID_ATTRIBUTE_NAME, ENTITY_ID_ATTRIBUTE_NAME])
    args.push('--search-attribute', `${name}=Keyword`);
  // Errors only: its warnings are mostly routine (its own workers' polls failing as it shuts down).
  args.push('--log-level', 'error');
  return args;
}

/** The binary's own version line ("temporal version 1.9.1 (Server …)"), else the pinned one. */
function cliVersion(binary: string): string {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return /temporal version (\S+)/.exec(out.stdout ?? '')?.[1] ?? pinnedVersion('cli');
}

function grpcAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Ready = the gRPC port accepts and the HTTP API lists our search attributes on the default namespace. */
async function isReady(ports: Ports): Promise<boolean> {
  if (!(await grpcAnswers(ports.grpc))) return false;
  const url = `http://127.0.0.1:${ports.http}/api/v1/namespaces/default/search-attributes`;
  const res = await fetch(url).catch(() => undefined);
  if (!res?.ok) return false;
  const body = (await res.json()) as { customAttributes?: Record<string, string> };
  return [MERCHANT_ID_ATTRIBUTE_NAME, ENTITY_ID_ATTRIBUTE_NAME].every((n) => n in (body.customAttributes ?? {}));
}

function logTail(logFile: string): string {
  try {
    return fs.readFileSync(logFile, 'utf8').slice(-2000).trim();
  } catch {
    return '';
  }
}

/** Resolves once ready; rejects if the process exits first or the timeout passes, naming the log file. */
async function waitReady(child: ChildProcess, ports: Ports, logFile: string, timeoutMs: number): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited)
      throw new LocalTemporalError(
        `Temporal dev server ${exited} before it was ready; see ${logFile}:\n${logTail(logFile)}`,
      );
    if (await isReady(ports).catch(() => false)) return;
    if (Date.now() > deadline)
      throw new LocalTemporalError(`Temporal dev server not ready after ${timeoutMs / 1000} s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function pickPorts(opts: LocalTemporalOptions): Promise<Ports> {
  const grpc = opts.port || (await freePort());
  const ui = opts.ui ? opts.uiPort || (await freePort()) : undefined;
  return { grpc, http: await freePort(), ui };
}

/** One spawn of the dev server, ended again if it does not become ready. */
async function spawnDevServer(binary: string, opts: LocalTemporalOptions, ports: Ports): Promise<ChildProcess> {
  const logFile = localLogFile(opts.dataDir);
  const log = fs.openSync(logFile, 'a');
  fs.writeSync(
    log,
    `--- ${new Date().toISOString()} npm start: temporal ${devServerArgs(localDbFile(opts.dataDir), ports, opts.dynamicConfig).join(' ')}\n`,
  );
  // Its own process group: a Ctrl-C in the terminal reaches npm start only, which stops the worker
  // before the server (the worker drains against it).
  const child = spawn(binary, devServerArgs(localDbFile(opts.dataDir), ports, opts.dynamicConfig), {
    detached: true,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  child.unref();
  let failed = '';
  child.once('error', (err) => (failed = err.message));
  const pid = child.pid;
  if (pid === undefined) throw new LocalTemporalError(`could not run ${binary}: ${failed || 'no pid'}`);
  writePidFile(localPidFile(opts.dataDir), pid);
  // Whatever ends this process short of SIGKILL (a failed start, process.exit) ends the server too.
  const onExit = (): void => void child.kill('SIGTERM');
  process.once('exit', onExit);
  child.once('exit', () => process.off('exit', onExit));
  try {
    await waitReady(child, ports, logFile, opts.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await endProcess(pid, () => child.exitCode !== null || child.signalCode !== null);
    removePidFile(localPidFile(opts.dataDir), pid);
    throw err;
  }
  return child;
}

export async function startLocalTemporal(opts: LocalTemporalOptions): Promise<LocalTemporal> {
  const t0 = Date.now();
  let binary: string;
  try {
    binary = temporalBinaryPath('cli');
  } catch (err) {
    throw new LocalTemporalError(errorMessage(err));
  }
  fs.mkdirSync(localDir(opts.dataDir), { recursive: true });
  const orphan = await endOrphan(localPidFile(opts.dataDir), localDbFile(opts.dataDir));
  if (orphan.owner)
    throw new LocalTemporalError(
      `another npm start (pid ${orphan.owner}) runs the Temporal dev server of ${opts.dataDir}: stop it, or use another DATA_DIR`,
    );
  if (orphan.ended)
    opts.logger.warn({ pid: orphan.ended }, 'ended the Temporal dev server a killed npm start left running');
  let child: ChildProcess | undefined;
  let ports: Ports | undefined;
  // A free port can be taken between our pick and the server's bind: pick again, twice at most.
  for (let attempt = 1; !child; attempt++) {
    ports = await pickPorts(opts);
    try {
      child = await spawnDevServer(binary, opts, ports);
    } catch (err) {
      const fixed = Boolean(opts.port || (opts.ui && opts.uiPort));
      if (attempt >= 3 || fixed || !/exited/.test(String(err))) throw err;
    }
  }
  const { grpc, http, ui } = ports as Ports;
  const pid = child.pid as number;
  opts.logger.info({ pid, ms: Date.now() - t0, log: localLogFile(opts.dataDir) }, 'Temporal dev server ready');
  const running = child;
  return {
    address: `127.0.0.1:${grpc}`,
    httpUrl: `http://127.0.0.1:${http}`,
    uiUrl: ui === undefined ? undefined : `http://127.0.0.1:${ui}`,
    kind: `official dev server, temporal CLI ${cliVersion(binary)}`,
    logFile: localLogFile(opts.dataDir),
    pid,
    stop: async () => {
      await endProcess(pid, () => running.exitCode !== null || running.signalCode !== null);
      removePidFile(localPidFile(opts.dataDir), pid);
    },
  };
}
