/**
 * GET /openapi.json — the OpenAPI 3.1 document (src/openapi/document.ts).
 * GET /docs — an API reference page: Swagger UI from the `swagger-ui-dist` npm package, served
 * from node_modules (no CDN, works offline), pointed at /openapi.json by a script of ours.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../../openapi/document';
import type { AppRouter } from '../types';

const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
/** The only files of the package the page needs; nothing else under node_modules is reachable. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>pixflow API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  validatorUrl: null,
});
`;

export function docsRoutes() {
  let document: Record<string, unknown> | undefined;
  return (router: AppRouter): void => {
    router.get('/openapi.json', (ctx) => {
      document ??= buildOpenApiDocument();
      ctx.set('cache-control', 'no-cache');
      ctx.body = document;
    });
    router.get('/docs', (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = PAGE;
    });
    router.get('/docs/init.js', (ctx) => {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT;
    });
    router.get('/docs/:asset', (ctx, next) => {
      const asset = (ctx.params as { asset: string }).asset;
      const type = Object.hasOwn(ASSETS, asset) ? ASSETS[asset] : undefined;
      if (!type) return next();
      ctx.type = type;
      ctx.set('cache-control', 'public, max-age=86400');
      ctx.body = fs.createReadStream(path.join(SWAGGER_DIR, asset));
      return undefined;
    });
  };
}
