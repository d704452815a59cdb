/**
 * QR image cost per charge: `qrcode.toDataURL` (the obvious path) against ours (src/pix/qr.ts),
 * inline and on the worker pool.
 *
 *   npx tsx bench/qr.ts [--count N] [--seconds S]
 *
 * For each scenario: images/s, per-image latency p50/p99 (call → data URL, so with concurrency > 1 it
 * includes queueing), main-thread busy time per image (event-loop utilisation, the CPU the API's
 * thread cannot spend on requests), and event-loop delay p99/max (perf_hooks monitorEventLoopDelay:
 * how late a timer fires while images are being made — what every other request would feel).
 * Each scenario stops at `count` images or `seconds`, whichever comes first. Closed-loop rows ("conc"
 * lanes, each image in its own loop turn) give capacity; open-loop rows ("rate", a fixed arrival rate)
 * give what the event loop feels under steady load.
 *
 * Also a module: runQrBench() returns the rows so that bench/run.ts can include them.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import QRCode from 'qrcode';
import { buildBrCode, newTxid } from '../src/pix/brcode';
import { createQrRenderer, defaultQrWorkers, type QrRenderer } from '../src/pix/qr';

export interface QrBenchOptions {
  /** Images per scenario at most (the baseline gets a tenth: it is ~40× slower). */
  count: number;
  /** Seconds per scenario at most. */
  seconds: number;
}

export interface QrBenchRow {
  scenario: string;
  concurrency: number;
  images: number;
  imagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  mainThreadMsPerImage: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

type Render = (text: string) => Promise<string>;

function samplePayloads(n: number): string[] {
  const keys = [
    '123e4567-e12b-12d1-a456-426655440000',
    'financeiro@lojaexemplo.com.br',
    '+5511987654321',
    '11222333000181',
  ];
  return Array.from({ length: n }, (_, i) =>
    buildBrCode({
      key: keys[i % keys.length] as string,
      merchantName: 'Loja Exemplo Comércio Ltda',
      merchantCity: 'São Paulo',
      amountCents: 100 + ((i * 7919) % 1_000_000),
      txid: newTxid(),
      initiationMethod: '12',
    }),
  );
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function measure(
  scenario: string,
  render: Render,
  payloads: readonly string[],
  concurrency: number,
  count: number,
  seconds: number,
): Promise<QrBenchRow> {
  // Warm-up: JIT, worker start, first-use allocations.
  for (let i = 0; i < Math.min(20, count); i++) await render(payloads[i % payloads.length] as string);

  const latencies: number[] = [];
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const deadline = performance.now() + seconds * 1000;
  let issued = 0;
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  histogram.enable();
  const lane = async (): Promise<void> => {
    while (issued < count && performance.now() < deadline) {
      // Each image starts in its own event-loop turn, as each charge arrives in its own request;
      // without this an inline renderer would run as one long microtask chain that starves the
      // loop entirely while the delay monitor, which needs the loop to turn, records nothing.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const text = payloads[issued++ % payloads.length] as string;
      const start = performance.now();
      await render(text);
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  histogram.disable();
  const elapsed = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  latencies.sort((a, b) => a - b);
  const n = latencies.length;
  return {
    scenario,
    concurrency,
    images: n,
    imagesPerSecond: (n * 1000) / elapsed,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    mainThreadMsPerImage: elu.active / n,
    loopDelayP99Ms: histogram.percentile(99) / 1e6,
    loopDelayMaxMs: histogram.max / 1e6,
  };
}

/**
 * Open loop at a fixed arrival rate, as an API under steady load sees it: images are started on a
 * 1 ms tick whether or not earlier ones finished, and the delay monitor shows how late the loop runs.
 */
async function measureAtRate(
  scenario: string,
  render: Render,
  payloads: readonly string[],
  rate: number,
  seconds: number,
): Promise<QrBenchRow> {
  for (let i = 0; i < 20; i++) await render(payloads[i] as string);
  const latencies: number[] = [];
  const inflight: Promise<void>[] = [];
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const total = Math.floor(rate * seconds);
  let issued = 0;
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  histogram.enable();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000));
      while (issued < due) {
        const start = performance.now();
        const text = payloads[issued++ % payloads.length] as string;
        inflight.push(render(text).then(() => void latencies.push(performance.now() - start)));
      }
      if (issued >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(inflight);
  histogram.disable();
  const elapsed = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    concurrency: 0,
    images: latencies.length,
    imagesPerSecond: (latencies.length * 1000) / elapsed,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    mainThreadMsPerImage: elu.active / latencies.length,
    loopDelayP99Ms: histogram.percentile(99) / 1e6,
    loopDelayMaxMs: histogram.max / 1e6,
  };
}

export async function runQrBench(options: Partial<QrBenchOptions> = {}): Promise<QrBenchRow[]> {
  const count = options.count ?? 2000;
  const seconds = options.seconds ?? 3;
  const payloads = samplePayloads(500);
  const rows: QrBenchRow[] = [];

  // Noise floor: the same loop with no work, so that delay figures can be read against it.
  const idle: Render = async () => '';
  rows.push(await measure('idle (no rendering)', idle, payloads, 8, count, Math.min(seconds, 1)));

  const baseline: Render = (text) => QRCode.toDataURL(text, { errorCorrectionLevel: 'M' });
  const baseCount = Math.max(20, Math.floor(count / 10));
  rows.push(await measure('qrcode.toDataURL', baseline, payloads, 1, baseCount, seconds));
  rows.push(await measure('qrcode.toDataURL', baseline, payloads, 8, baseCount, seconds));

  const variants: [string, QrRenderer][] = [
    ['ours, inline', createQrRenderer({ workers: 0 })],
    ['ours, 1 worker', createQrRenderer({ workers: 1 })],
    ['ours, 2 workers', createQrRenderer({ workers: 2 })],
  ];
  try {
    for (const [name, renderer] of variants) {
      await renderer.warm();
      const render: Render = (text) => renderer.render(text);
      rows.push(await measure(name, render, payloads, 1, count, seconds));
      rows.push(await measure(name, render, payloads, 8, count, seconds));
    }
    // Steady load: 1,000 charges/s for a bounded time (never more than `count` images).
    const rateSeconds = Math.min(seconds, count / 1000);
    rows.push(await measureAtRate('baseline @ 100/s', baseline, payloads, 100, Math.min(seconds, 2)));
    for (const [name, renderer] of variants) {
      rows.push(await measureAtRate(`${name} @ 1000/s`, (t) => renderer.render(t), payloads, 1000, rateSeconds));
    }
  } finally {
    await Promise.all(variants.map(([, r]) => r.close()));
  }
  return rows;
}

export function formatQrBench(rows: readonly QrBenchRow[]): string {
  const head = ['scenario', 'conc', 'images', 'img/s', 'p50 ms', 'p99 ms', 'main ms/img', 'loop p99 ms', 'loop max ms'];
  const body = rows.map((r) => [
    r.scenario,
    r.concurrency === 0 ? 'rate' : String(r.concurrency),
    String(r.images),
    r.imagesPerSecond.toFixed(0),
    r.p50Ms.toFixed(3),
    r.p99Ms.toFixed(3),
    r.mainThreadMsPerImage.toFixed(3),
    r.loopDelayP99Ms.toFixed(2),
    r.loopDelayMaxMs.toFixed(2),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

function argValue(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const v = Number(process.argv[i + 1]);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

if (require.main === module) {
  const count = argValue('--count');
  const seconds = argValue('--seconds');
  runQrBench({ ...(count ? { count } : {}), ...(seconds ? { seconds } : {}) })
    .then((rows) => {
      console.log(`QR image per charge (Node ${process.version}, ${defaultQrWorkers()} worker(s) by default)\n`);
      console.log(formatQrBench(rows));
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
