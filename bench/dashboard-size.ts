/**
 * What the dashboard's first load downloads: the JavaScript and CSS that `/dashboard`'s page names
 * (its `<script src>` and stylesheet `<link href>`), raw and gzip-compressed, against the budget of
 * 300 KB (KiB) of JavaScript gzip. Builds the dashboard first when there is no build or a source is
 * newer than it. Reads files only: no server, a fraction of a second.
 *
 *   npx tsx bench/dashboard-size.ts            → bench/results-dashboard.json
 *
 * Also a module: bench/run.ts includes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BUILD_DIR, DASHBOARD_DIR, buildDashboard, dashboardBuilt } from '../tools/dashboard/src/build';

export const JS_GZIP_BUDGET_BYTES = 300 * 1024;
const ASSET_PREFIX = '/dashboard/assets/';
const ROOT = path.resolve(__dirname, '..');

export interface LoadedFile {
  url: string;
  kind: 'js' | 'css';
  bytes: number;
  gzipBytes: number;
}

export interface DashboardSize {
  measuredAt: string;
  /** Whether this run built the dashboard (no build, or one older than its sources). */
  built: boolean;
  files: LoadedFile[];
  jsGzipBytes: number;
  cssGzipBytes: number;
  jsGzipBudgetBytes: number;
  withinBudget: boolean;
  versions: { preact: string; esbuild: string };
}

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...fs.readdirSync(entry).map((name) => newestMtime(path.join(entry, name))));
}

/** The build is stale when the app's sources, the build script or the locked dependencies are newer. */
function buildIsCurrent(): boolean {
  if (!dashboardBuilt()) return false;
  const sources = [
    path.join(DASHBOARD_DIR, 'src'),
    path.join(ROOT, 'tools/dashboard/src/build.ts'),
    path.join(ROOT, 'package-lock.json'),
  ];
  return Math.max(...sources.map(newestMtime)) <= fs.statSync(path.join(BUILD_DIR, 'app.js')).mtimeMs;
}

/** The asset URLs the page loads, in its order: scripts and stylesheets. */
function pageAssets(html: string): Array<{ url: string; kind: 'js' | 'css' }> {
  const found: Array<{ at: number; url: string; kind: 'js' | 'css' }> = [];
  for (const m of html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)) found.push({ at: m.index, url: m[1]!, kind: 'js' });
  for (const m of html.matchAll(/<link\b[^>]*\brel="stylesheet"[^>]*\bhref="([^"]+)"/g))
    found.push({ at: m.index, url: m[1]!, kind: 'css' });
  return found.sort((a, b) => a.at - b.at).map(({ url, kind }) => ({ url, kind }));
}

const versionOf = (pkg: string): string =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
    .version;

export async function runDashboardSizeBench(): Promise<DashboardSize> {
  const built = !buildIsCurrent();
  if (built) await buildDashboard();
  const files = pageAssets(fs.readFileSync(path.join(BUILD_DIR, 'index.html'), 'utf8')).map(({ url, kind }) => {
    if (!url.startsWith(ASSET_PREFIX)) throw new Error(`the page loads ${url}, which is not one of the build's files`);
    const file = path.join(BUILD_DIR, url.slice(ASSET_PREFIX.length));
    // The build's own .gz: the bytes the API sends a browser that accepts gzip.
    return { url, kind, bytes: fs.statSync(file).size, gzipBytes: fs.statSync(`${file}.gz`).size };
  });
  if (!files.some((f) => f.kind === 'js')) throw new Error('the page loads no JavaScript: is index.html the build’s?');
  const gzipOf = (kind: 'js' | 'css') => files.filter((f) => f.kind === kind).reduce((n, f) => n + f.gzipBytes, 0);
  const jsGzipBytes = gzipOf('js');
  return {
    measuredAt: new Date().toISOString(),
    built,
    files,
    jsGzipBytes,
    cssGzipBytes: gzipOf('css'),
    jsGzipBudgetBytes: JS_GZIP_BUDGET_BYTES,
    withinBudget: jsGzipBytes <= JS_GZIP_BUDGET_BYTES,
    versions: { preact: versionOf('preact'), esbuild: versionOf('esbuild') },
  };
}

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

export function formatDashboardSizeBench(r: DashboardSize): string {
  const head = ['file', 'raw KB', 'gzip KB'];
  const body = [
    ...r.files.map((f) => [f.url, kb(f.bytes), kb(f.gzipBytes)]),
    ['JavaScript, gzip', '', kb(r.jsGzipBytes)],
    ['CSS, gzip', '', kb(r.cssGzipBytes)],
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  const verdict = `${kb(r.jsGzipBytes)} KB of JavaScript gzip against a budget of ${kb(r.jsGzipBudgetBytes)} KB: ${
    r.withinBudget ? 'within' : 'OVER'
  }${r.built ? ' (built for this run)' : ''}`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), '', verdict].join('\n');
}

export function writeDashboardSizeResults(r: DashboardSize): void {
  fs.writeFileSync(path.join(__dirname, 'results-dashboard.json'), `${JSON.stringify(r, null, 2)}\n`);
}

if (require.main === module) {
  runDashboardSizeBench()
    .then((r) => {
      console.log(formatDashboardSizeBench(r));
      writeDashboardSizeResults(r);
      if (!r.withinBudget) process.exitCode = 1;
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
