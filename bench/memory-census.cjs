// Memory census of the `npm start` service under bench/external.ts
// (docs/performance.md "Memory"). A preload, plain JavaScript so that it runs in every thread without tsx:
//
//   CENSUS_DIR=/tmp/census NODE_OPTIONS="--require $PWD/bench/memory-census.cjs" npx tsx bench/external.ts --seconds 8
//
// Acts only in the service (DATA_DIR set): every thread writes <pid>-<threadId>.json with its
// largest V8 heap (and the spaces at that moment) and a guess at its role; the main thread adds
// the process's RSS peak with an smaps breakdown and a per-second series (RSS, heap, large
// objects). CENSUS_SNAP=<MB> writes one heap snapshot of the main thread once its used heap passes
// that size (it costs a lot of RSS itself: ignore that run's peak). CENSUS_FLAGS is passed to
// v8.setFlagsFromString in the main thread before anything else (experiments only).
// CENSUS_GC_EVERY=<s> makes every thread run a full collection every s seconds and record the heap
// used after it (`liveSeries`: [time, MB]): live memory over time, the slope of which is memory
// per open charge (docs/performance.md "Memory per open charge"). It costs CPU: ignore that run's speed.
const dir = process.env.CENSUS_DIR;
const isService =
  dir &&
  process.env.DATA_DIR &&
  (!require('worker_threads').isMainThread || process.argv.some((a) => /start\.ts$/.test(a)));
if (isService) {
  const fs = require('fs');
  const v8 = require('v8');
  const wt = require('worker_threads');
  const MB = 1024 * 1024;
  if (wt.isMainThread && process.env.CENSUS_FLAGS) v8.setFlagsFromString(process.env.CENSUS_FLAGS);
  const r = (n) => Math.round((n / MB) * 10) / 10;
  const role = () => {
    if (wt.isMainThread) return 'main';
    const keys = Object.keys(require.cache);
    const has = (s) => keys.some((k) => k.includes(s));
    if (has('local-server-thread')) return 'temporal-server';
    if (has('charge-workflows-thread')) return 'charge-client';
    if (has('simulator/thread')) return 'simulator';
    if (has('qr-worker')) return 'qr';
    if (has('workflow-worker-thread')) return 'sdk-workflow';
    return (
      'unknown:wd=' +
      JSON.stringify(Object.keys(wt.workerData || {})) +
      ' argv=' +
      JSON.stringify(process.argv.slice(0, 3)) +
      ' ' +
      keys
        .filter((k) => !k.includes('node_modules'))
        .slice(0, 3)
        .join(',') +
      '|' +
      keys.slice(0, 3).join(',')
    );
  };
  let max = { total: 0 };
  let rssMax = { rss: 0 };
  const series = [];
  let lastSeries = 0;
  const file = `${dir}/${process.pid}-${wt.threadId}.json`;
  const gcEvery = Number(process.env.CENSUS_GC_EVERY || 0);
  const liveSeries = [];
  if (gcEvery > 0) {
    v8.setFlagsFromString('--expose-gc');
    const gc = require('vm').runInNewContext('gc');
    setInterval(() => {
      gc();
      liveSeries.push([new Date().toISOString().slice(11, 19), r(v8.getHeapStatistics().used_heap_size)]);
    }, gcEvery * 1000).unref();
  }
  const smaps = () => {
    const out = { anonHeap: 0, anonOther: 0, arenas64: 0, fileNode: 0, fileOther: 0, stack: 0, total: 0 };
    try {
      const text = fs.readFileSync('/proc/self/smaps', 'utf8');
      let cur = null;
      for (const line of text.split('\n')) {
        const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (m) {
          const size = parseInt(m[2], 16) - parseInt(m[1], 16);
          const name = m[3];
          cur =
            name === '[heap]'
              ? 'anonHeap'
              : name.startsWith('[stack')
                ? 'stack'
                : name.endsWith('.node')
                  ? 'fileNode'
                  : name.startsWith('/')
                    ? 'fileOther'
                    : name
                      ? 'anonOther'
                      : size >= 60 * MB && size <= 66 * MB
                        ? 'arenas64'
                        : 'anonOther';
          continue;
        }
        const rss = /^Rss:\s+(\d+) kB/.exec(line);
        if (rss && cur) {
          out[cur] += Number(rss[1]) * 1024;
          out.total += Number(rss[1]) * 1024;
        }
      }
    } catch {}
    for (const k of Object.keys(out)) out[k] = r(out[k]);
    return out;
  };
  const sample = () => {
    const h = v8.getHeapStatistics();
    if (
      wt.isMainThread &&
      process.env.CENSUS_SNAP &&
      !global.__snapped &&
      h.used_heap_size > Number(process.env.CENSUS_SNAP) * MB
    ) {
      global.__snapped = true;
      const t0 = Date.now();
      const f = v8.writeHeapSnapshot(`${dir}/main.heapsnapshot`);
      const after = v8.getHeapStatistics();
      fs.writeFileSync(
        `${dir}/snap.txt`,
        `${f} before used ${r(h.used_heap_size)} after ${r(after.used_heap_size)} ms ${Date.now() - t0}\n`,
      );
    }
    if (h.total_heap_size > max.total) {
      const spaces = {};
      for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = r(s.space_size);
      max = {
        total: h.total_heap_size,
        totalMb: r(h.total_heap_size),
        usedMb: r(h.used_heap_size),
        externalMb: r(h.external_memory),
        mallocedMb: r(h.malloced_memory),
        peakMallocedMb: r(h.peak_malloced_memory),
        limitMb: r(h.heap_size_limit),
        spaces,
        at: new Date().toISOString(),
      };
    }
    const rec = { role: role(), threadId: wt.threadId, pid: process.pid, maxHeap: max };
    if (liveSeries.length > 0) rec.liveSeries = liveSeries;
    if (wt.isMainThread) {
      const st = fs.readFileSync('/proc/self/status', 'utf8');
      const rss = Number(/VmRSS:\s+(\d+)/.exec(st)[1]) * 1024;
      if (rss > rssMax.rss)
        rssMax = {
          rss,
          rssMb: r(rss),
          at: new Date().toISOString(),
          threads: Number(/Threads:\s+(\d+)/.exec(st)[1]),
          smaps: smaps(),
        };
      rec.rssMax = rssMax;
      rec.hwmMb = r(Number(/VmHWM:\s+(\d+)/.exec(st)[1]) * 1024);
      if (Date.now() - lastSeries >= 1000) {
        lastSeries = Date.now();
        const lo = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'large_object_space');
        series.push([new Date().toISOString().slice(11, 19), r(rss), r(h.total_heap_size), r(lo.space_size)]);
      }
      rec.series = series;
    }
    try {
      fs.writeFileSync(file, JSON.stringify(rec));
    } catch {}
  };
  setInterval(sample, wt.isMainThread ? 200 : 250).unref();
}
