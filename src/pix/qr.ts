/**
 * QR Code image for a charge: `renderQrDataUrl(brCode)` → `data:image/png;base64,…`.
 *
 * The rendering itself (qr-png.ts) costs ~0.3 ms of CPU. Run inline, that is 0.3 ms during which the
 * API's event loop serves nobody, per charge; so by default it runs on a small worker_threads pool
 * and the main thread only pays for a postMessage round trip. bench/qr.ts measures both ways
 * (throughput, per-image latency, event-loop delay); the figures are in the commit that chose this.
 *
 * Workers start on first use (or warmQrRenderer()), hold the process open only while they have work,
 * and are replaced if one dies; closeQrRenderer() stops them for a clean shutdown.
 */
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { renderQrDataUrlSync } from './qr-png';
import { workerBootstrap } from '../lib/threads';
import type { QrJob, QrWorkerMessage } from './qr-worker';
import { errorMessage } from '../lib/error-message';

export class QrRenderError extends Error {
  override readonly name = 'QrRenderError';
}

export interface QrRenderer {
  /** Number of worker threads; 0 renders on the calling thread. */
  readonly workers: number;
  render(text: string): Promise<string>;
  /** Starts the workers now rather than on the first render (their start-up takes tens of ms). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  text: string;
  resolve(url: string): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** The worker has loaded the encoder and said so ('ready'); 'online' alone is too early. */
  isOnline: boolean;
  /** Settles when the worker is ready, or is gone without ever having been ready. */
  started: Promise<void>;
}

function createInlineRenderer(): QrRenderer {
  let closed = false;
  return {
    workers: 0,
    render: async (text) => {
      if (closed) throw new QrRenderError('QR renderer is closed');
      try {
        return renderQrDataUrlSync(text);
      } catch (err) {
        throw new QrRenderError(errorMessage(err));
      }
    },
    warm: async () => {},
    close: async () => {
      closed = true;
    },
  };
}

function createPoolRenderer(size: number, bootstrap: string): QrRenderer {
  return new PoolRenderer(size, bootstrap);
}

/** Renders on a pool of worker threads, least outstanding work first. */
class PoolRenderer implements QrRenderer {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;
  // Set when a worker dies before it ever came up: the environment cannot run workers (missing
  // file, no tsx...), and respawning one per charge would cost far more than rendering inline.
  private inlineFallback = false;
  private readonly inline = createInlineRenderer();

  constructor(
    readonly workers: number,
    private readonly bootstrap: string,
  ) {}

  render(text: string): Promise<string> {
    if (this.closed) return Promise.reject(new QrRenderError('QR renderer is closed'));
    if (typeof text !== 'string' || text.length === 0) {
      return Promise.reject(new QrRenderError('QR text must be a non-empty string'));
    }
    if (this.inlineFallback) return this.inline.render(text);
    this.fill();
    // Least outstanding work first; ties go to the first slot.
    let slot = this.slots[0] as Slot;
    for (const s of this.slots) if (s.pending.size < slot.pending.size) slot = s;
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref(); // keep the process up until the answer comes
      slot.pending.set(id, { text, resolve, reject });
      const job: QrJob = { id, text };
      slot.worker.postMessage(job);
    });
  }

  async warm(): Promise<void> {
    if (this.closed || this.inlineFallback) return;
    this.fill();
    const starting = this.slots.slice();
    for (const s of starting) s.worker.ref(); // an await on an unref'd worker alone would let the process exit
    await Promise.all(starting.map((s) => s.started));
    for (const s of starting) if (s.pending.size === 0) s.worker.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.slots.splice(0);
    for (const s of all) failAll(s, new QrRenderError('QR renderer is closed'));
    await Promise.all(all.map((s) => s.worker.terminate()));
  }

  private fill(): void {
    while (this.slots.length < this.workers) this.spawn();
  }

  private spawn(): Slot {
    const worker = new Worker(this.bootstrap, { eval: true, name: 'qr-render' });
    let markStarted: () => void = () => {};
    worker.unref(); // idle workers must not keep the process alive
    const slot: Slot = {
      worker,
      pending: new Map(),
      isOnline: false,
      started: new Promise<void>((resolve) => {
        markStarted = resolve;
        worker.once('exit', () => resolve());
      }),
    };
    worker.on('message', (msg: QrWorkerMessage) => {
      if ('ready' in msg) {
        slot.isOnline = true;
        markStarted();
        return;
      }
      const p = slot.pending.get(msg.id);
      if (!p) return;
      slot.pending.delete(msg.id);
      if (slot.pending.size === 0) worker.unref();
      if (msg.ok) p.resolve(msg.url);
      else p.reject(new QrRenderError(msg.message));
    });
    worker.on('error', (err) => this.drop(slot, new QrRenderError(`QR worker failed: ${err.message}`)));
    worker.on('exit', (code) => this.drop(slot, new QrRenderError(`QR worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private drop(slot: Slot, err: Error): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1); // the next render spawns a replacement
    if (!slot.isOnline && !this.closed) {
      this.inlineFallback = true;
      for (const p of slot.pending.values()) this.inline.render(p.text).then(p.resolve, p.reject);
      slot.pending.clear();
      return;
    }
    failAll(slot, err);
  }
}

function failAll(slot: Slot, err: Error): void {
  for (const p of slot.pending.values()) p.reject(err);
  slot.pending.clear();
}

/**
 * A renderer with `workers` threads (0: inline on the calling thread). `workerBootstrap` replaces the
 * code each worker starts with (tests use it to simulate a worker that cannot start or that dies).
 */
export function createQrRenderer(options: { workers: number; workerBootstrap?: string }): QrRenderer {
  const n = options.workers;
  if (!Number.isInteger(n) || n < 0) throw new RangeError('workers must be an integer ≥ 0');
  return n === 0
    ? createInlineRenderer()
    : createPoolRenderer(n, options.workerBootstrap ?? workerBootstrap(path.join(__dirname, 'qr-worker'), __filename));
}

/**
 * Leave one core to the event loop; on a 2-core machine that is one worker. More workers than cores
 * would only add contention with the API thread and the database.
 */
export function defaultQrWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}

let shared: QrRenderer | undefined;

function defaultRenderer(): QrRenderer {
  shared ??= createQrRenderer({ workers: defaultQrWorkers() });
  return shared;
}

/** The charge's QR image: a PNG data URL that decodes to exactly `payload`. */
export function renderQrDataUrl(payload: string): Promise<string> {
  return defaultRenderer().render(payload);
}

/**
 * Optional: start the shared pool at boot so that the first charge does not pay for it. `workers`
 * (the API passes QR_THREADS) replaces the shared renderer with one of that many threads; 0 renders
 * on the calling thread, which spares the process a thread and its isolate
 * (docs/performance.md "Memory").
 */
export async function warmQrRenderer(workers?: number): Promise<void> {
  if (workers !== undefined && shared?.workers !== workers) {
    const previous = shared;
    shared = createQrRenderer({ workers });
    await previous?.close();
  }
  return defaultRenderer().warm();
}

/** Stops the shared pool (graceful shutdown, test teardown). A later render starts a new one. */
export async function closeQrRenderer(): Promise<void> {
  const r = shared;
  shared = undefined;
  if (r) await r.close();
}
