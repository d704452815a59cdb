/**
 * Worker threads that serve calls from the main thread (docs/performance.md "Where a charge's time goes": the
 * API's event loop is the bottleneck under load, so work that needs no request state — the
 * Temporal client's gRPC, the acquirer simulator — runs beside it and costs the main thread one
 * postMessage each way).
 *
 *   host:   const rpc = await ThreadRpc.start(file, { name, workerData });  await rpc.call('m', [a, b]);
 *   thread: serveThreadRpc({ m: async (a, b) => … }, info);
 *
 * Errors cross as `{ name, message }` and are rebuilt on the host (`ThreadCallError`, whose `name`
 * is the thread's error's), so a caller can still tell a refusal from a failure by name.
 */
import path from 'node:path';
import { Worker, parentPort } from 'node:worker_threads';
import { errorMessage } from './error-message';

/**
 * The source a worker starts with: the compiled file, or under tsx (tests, `npm start`) tsx's
 * require hook first, since a worker does not inherit the parent's hooks (mocha's `--require tsx/cjs`).
 * `file` is the module's own `__filename` sibling without extension, e.g. path.join(__dirname, 'qr-worker').
 */
export function workerBootstrap(fileWithoutExtension: string, callerFilename: string): string {
  const ext = path.extname(callerFilename);
  const load = `require(${JSON.stringify(`${fileWithoutExtension}${ext}`)});`;
  const prelude = `${threadMapLine(path.basename(fileWithoutExtension))}${ext === '.ts' ? `require(${JSON.stringify(require.resolve('tsx/cjs'))});` : ''}`;
  return `${prelude}${load}`;
}

/**
 * With PIXFLOW_THREAD_MAP=<file> (set by `bench/external.ts --threads`), each thread appends
 * "<name> <os thread id>" to that file as it starts, so the benchmark can tell the CPU of the
 * process's threads apart in /proc (they are all called "node" there).
 * docs/performance.md "Where a charge's time goes".
 */
function threadMapLine(name: string): string {
  const file = process.env.PIXFLOW_THREAD_MAP;
  if (!file) return '';
  return `try{const fs=require('node:fs');fs.appendFileSync(${JSON.stringify(file)},${JSON.stringify(name)}+' '+fs.readlinkSync('/proc/thread-self').split('/').pop()+'\\n')}catch{}`;
}

const YOUNG_GENERATION_MB = 4;

type Request = { id: number; method: string; args: unknown[] };
type Reply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { name: string; message: string } };
type Ready = { ready: true; info: unknown } | { ready: false; error: string };

/** An error thrown in the thread, as the host sees it. */
export class ThreadCallError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export class ThreadRpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private exited: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly info: unknown,
  ) {
    worker.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new ThreadCallError(m.error.name, m.error.message));
    });
    worker.on('exit', (code) => {
      this.exited = new Error(`thread exited with code ${code}`);
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    });
  }

  /** Starts the thread and waits for its `serveThreadRpc` to say it is ready (with its info). */
  static start(
    fileWithoutExtension: string,
    callerFilename: string,
    opts: { name: string; workerData?: unknown },
  ): Promise<ThreadRpc> {
    const worker = new Worker(workerBootstrap(fileWithoutExtension, callerFilename), {
      eval: true,
      name: opts.name,
      workerData: opts.workerData,
      // A small young generation: these threads allocate steadily under load, and each isolate's
      // young generation otherwise grows to tens of MB (docs/performance.md "Where a charge's time goes": memory).
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number): void =>
        reject(new Error(`${opts.name} thread exited with code ${code} before it was ready`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (m: Ready) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if (!m.ready) {
          void worker.terminate();
          reject(new Error(`${opts.name} thread failed to start: ${m.error}`));
          return;
        }
        // An error after start ends the thread; its exit rejects whatever was pending.
        worker.on('error', () => undefined);
        resolve(new ThreadRpc(worker, m.info));
      });
    });
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  call<T>(method: string, args: unknown[]): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, args } satisfies Request);
    });
  }

  /** Asks the thread to close (its `close` handler, if any) and waits for it to exit. */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ id: 0, method: '__close', args: [] } satisfies Request);
    const timer = setTimeout(() => void this.worker.terminate(), 10_000);
    await gone;
    clearTimeout(timer);
  }
}

export type ThreadHandlers = Record<string, (...args: never[]) => unknown>;

/**
 * The thread side: answers every call with its handler's result. `start` runs first and its result
 * is the `info` the host receives; `close` runs on the host's close(), then the thread ends.
 */
export function serveThreadRpc(
  start: () => Promise<{ handlers: ThreadHandlers; info?: unknown; close?: () => Promise<void> }>,
): void {
  const port = parentPort;
  if (!port) throw new Error('serveThreadRpc runs in a worker thread');
  start().then(
    ({ handlers, info, close }) => {
      port.on('message', (m: Request) => {
        if (m.method === '__close') {
          void (close ?? (() => Promise.resolve()))()
            .catch(() => undefined)
            .finally(() => port.close());
          return;
        }
        const handler = handlers[m.method] as ((...args: unknown[]) => unknown) | undefined;
        const reply = (r: Reply): void => port.postMessage(r);
        if (!handler) {
          reply({ id: m.id, ok: false, error: { name: 'Error', message: `no such method: ${m.method}` } });
          return;
        }
        Promise.resolve()
          .then(() => handler(...m.args))
          .then(
            (value) => reply({ id: m.id, ok: true, value }),
            (err: unknown) =>
              reply({
                id: m.id,
                ok: false,
                error:
                  err instanceof Error
                    ? { name: err.name, message: err.message }
                    : { name: 'Error', message: String(err) },
              }),
          );
      });
      port.postMessage({ ready: true, info: info ?? null } satisfies Ready);
    },
    (err: unknown) => port.postMessage({ ready: false, error: errorMessage(err) } satisfies Ready),
  );
}
