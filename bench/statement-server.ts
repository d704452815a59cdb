/**
 * The service's HTTP app for bench/statement.ts, in a process of its own so that its memory is
 * measured alone: `createApp` with the account services of the composition root (where the
 * statement routes live), the service's knex and pg type parsers, over the bench's PostgreSQL as
 * the service's role. What `npm start` adds (Temporal, the worker, the payment routes) plays no
 * part in a statement, and is left out to keep the bench small.
 *
 *   DATABASE_URL=postgres://… PORT=0 ADMIN_EMAIL=… ADMIN_PASSWORD=… npx tsx bench/statement-server.ts
 *     → prints `listening <port>`
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/http/app';
import { createKnex } from '../src/db/knex';
import { createLogger } from '../src/lib/logger';
import { createAccountServices } from '../src/runtime/composition';
import { ensureAdmin } from '../src/services/accounts/admin-bootstrap';
import type { AppConfig } from '../src/config';

const CONFIG: AppConfig = {
  JWT_SECRET: 'bench-jwt-secret-0123456789abcdef0123456789',
  JWT_TTL: 3600,
  API_KEY_PEPPER: 'bench-api-key-pepper-0123456789abcdef',
  // One credential drives the load: the limiter is not what is measured.
  RATE_LIMIT_RPS: 1_000_000,
  RATE_LIMIT_BURST: 1_000_000,
  RATE_LIMIT_ADDRESS_RPS: 1_000_000,
  RATE_LIMIT_ADDRESS_BURST: 1_000_000,
  AUTH_FAILURES_PER_ADDRESS: 1_000_000,
  AUTH_FAILURE_WINDOW_SECONDS: 60,
  LOGIN_MAX_FAILURES_PER_ACCOUNT: 10,
  LOGIN_MAX_FAILURES_PER_ADDRESS: 1_000_000,
  LOGIN_WINDOW_SECONDS: 900,
  PASSWORD_HASH_CONCURRENCY: 2,
  PASSWORD_HASH_QUEUE: 1000,
  TRUST_PROXY: false,
  BODY_LIMIT_BYTES: 64 * 1024,
  MAX_API_KEYS_PER_MERCHANT: 50,
  DEFAULT_FEE_BPS: 99,
  DEFAULT_FEE_FIXED: 0,
  DEFAULT_SETTLEMENT_DELAY_SECONDS: 86400,
};

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const knex = createKnex(url);
  const logger = createLogger({ level: 'warn', destination: process.stderr });
  await ensureAdmin(knex, { ADMIN_EMAIL: process.env.ADMIN_EMAIL, ADMIN_PASSWORD: process.env.ADMIN_PASSWORD });
  const app = createApp({
    config: CONFIG,
    knex,
    logger,
    checks: { temporal: async () => undefined },
    services: createAccountServices({ knex, config: CONFIG, logger }),
  });
  // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
  console.log(`listening ${(server.address() as AddressInfo).port}`);
  const stop = (): void => {
    server.close();
    void knex.destroy().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
