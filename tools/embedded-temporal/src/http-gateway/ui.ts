/**
 * The Temporal UI's port (README "Web UI"): the UI's static build (tools/temporal-ui, a single-page
 * app) with an `index.html` fallback for its client-side routes, and the HTTP API's `/api/...`
 * routes on the same origin, since the UI calls them relative to the page (it is built with an
 * empty VITE_API).
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
};

/** Answered while the build is missing: the API still works on this port, the page says how to build. */
const notBuilt = (dir: string): string =>
  '<!doctype html><html><head><meta charset="utf-8"><title>Temporal UI not built</title></head><body>' +
  `<h1>The Temporal UI is not built</h1><p>No <code>index.html</code> in <code>${escapeHtml(dir)}</code>. ` +
  'Build it with <code>npm run build -w @pixflow/temporal-ui</code> (<code>npm start</code> does this by itself). ' +
  'The HTTP API answers here meanwhile: <a href="/api/v1/namespaces">/api/v1/namespaces</a>.</p></body></html>';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The file under `dir` a URL path names, or undefined (outside `dir`, undecodable or not a file). */
function fileFor(dir: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = path.resolve(dir, `.${path.posix.normalize(`/${decoded}`)}`);
  if (file !== dir && !file.startsWith(dir + path.sep)) return undefined;
  try {
    return fs.statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

export function uiRequestHandler(opts: { dir: string; api: http.RequestListener }): http.RequestListener {
  const dir = path.resolve(opts.dir);
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const urlPath = q < 0 ? url : url.slice(0, q);
    if (urlPath === '/api' || urlPath.startsWith('/api/')) {
      opts.api(req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
      res.end('Method Not Allowed\n');
      return;
    }
    const index = path.join(dir, 'index.html');
    if (!fs.existsSync(index)) {
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : notBuilt(dir));
      return;
    }
    // Any path that is not a file is one of the app's routes: its shell, which routes in the browser.
    const file = fileFor(dir, urlPath) ?? index;
    const size = fs.statSync(file).size;
    res.writeHead(200, {
      'content-type': contentTypes[path.extname(file)] ?? 'application/octet-stream',
      'content-length': size,
      // Hashed file names never change content; the shell must be re-read after a rebuild.
      'cache-control': urlPath.startsWith('/_app/immutable/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    fs.createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  };
}
