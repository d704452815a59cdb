/**
 * The routes a running Koa app mounts, read from its @koa/router (the router's dispatch middleware
 * carries the router), so security suites enumerate what is really served instead of a list that
 * can fall behind.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { AppState } from '../../src/http/types';

export interface RouteEntry {
  method: string;
  path: string;
}

export function routesOf(app: Koa<AppState>): RouteEntry[] {
  const routers = app.middleware
    .map((m) => (m as { router?: Router<AppState> }).router)
    .filter((r): r is Router<AppState> => r !== undefined);
  if (routers.length === 0) throw new Error('no @koa/router mounted on this app');
  const out: RouteEntry[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      for (const method of layer.methods) {
        // HEAD is added by the router for every GET.
        if (method !== 'HEAD') out.push({ method, path: layer.path });
      }
    }
  }
  return out;
}
