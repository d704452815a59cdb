/**
 * Builds the merchants' dashboard (dashboard/src, Preact) into dashboard/.build with esbuild:
 * index.html, app.js, app.css, each with its `.gz` — the files src/http/dashboard/assets.ts serves. Run by
 * `npm install` (tools/dashboard/postinstall.cjs), `npm run dashboard:build`, and by `npm start`
 * when no build is there. Paths come from this file's location, so any checkout works.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { errorMessage } from '../../../src/lib/error-message';

export const DASHBOARD_DIR = path.resolve(__dirname, '../../../dashboard');
export const BUILD_DIR = path.join(DASHBOARD_DIR, '.build');

export interface DashboardBuild {
  dir: string;
  /** app.js as served, gzip-compressed: what a first load downloads of JavaScript. */
  jsGzipBytes: number;
  millis: number;
}

const PAGE = `<!doctype html>
<html lang="pt-BR">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>pixflow — painel</title>
  <link rel="stylesheet" href="/dashboard/assets/app.css">
  <script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
  <div id="app"></div>
</body>
</html>
`;

export async function buildDashboard(): Promise<DashboardBuild> {
  const started = Date.now();
  // Loaded here: only a development install has esbuild, and the API never needs it to serve a build.
  const esbuild = await import('esbuild');
  const staging = `${BUILD_DIR}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  await esbuild.build({
    entryPoints: { app: path.join(DASHBOARD_DIR, 'src/main.tsx') },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    outdir: staging,
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(DASHBOARD_DIR, 'src/app.css'), path.join(staging, 'app.css'));
  fs.writeFileSync(path.join(staging, 'index.html'), PAGE);
  // Each file beside its gzip form, compressed once here: the API sends that to a browser that
  // accepts gzip (src/http/routes/dashboard.ts), with no compression per request.
  for (const file of ['index.html', 'app.js', 'app.css'])
    fs.writeFileSync(
      path.join(staging, `${file}.gz`),
      zlib.gzipSync(fs.readFileSync(path.join(staging, file)), { level: zlib.constants.Z_BEST_COMPRESSION }),
    );
  // Swapped in whole, so a running API never serves half a build.
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  fs.renameSync(staging, BUILD_DIR);
  const jsGzipBytes = fs.statSync(path.join(BUILD_DIR, 'app.js.gz')).size;
  return { dir: BUILD_DIR, jsGzipBytes, millis: Date.now() - started };
}

/** Whether dashboard/.build holds every file the API serves. */
export function dashboardBuilt(): boolean {
  return ['index.html', 'app.js', 'app.css'].every(
    (f) => fs.existsSync(path.join(BUILD_DIR, f)) && fs.existsSync(path.join(BUILD_DIR, `${f}.gz`)),
  );
}

export const describeBuild = (b: DashboardBuild): string =>
  `built ${path.relative(process.cwd(), b.dir) || b.dir} in ${(b.millis / 1000).toFixed(1)}s (JavaScript ${(b.jsGzipBytes / 1024).toFixed(1)} KB gzip)`;

if (require.main === module) {
  process.stderr.write('[pixflow] dashboard: building dashboard/src with esbuild\n');
  buildDashboard().then(
    (b) => process.stderr.write(`[pixflow] dashboard: ${describeBuild(b)}\n`),
    (err: unknown) => {
      process.stderr.write(`[pixflow] dashboard: build failed: ${errorMessage(err)}\n`);
      process.exitCode = 1;
    },
  );
}
