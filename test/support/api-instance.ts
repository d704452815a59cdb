/**
 * A second API instance in its own process, on the test database (for guarantees that must hold
 * across processes). Usage: `node --import tsx test/support/api-instance.ts <database url>`;
 * prints `{"port":N}` once listening, and exits when stdin closes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKnex, bindModels } from '../../src/db';
import { createAccountServices } from '../../src/runtime/composition';
import { createApp } from '../../src/http/app';
import { createLogger } from '../../src/lib/logger';
import { TEST_CONFIG } from './api';

async function main(): Promise<void> {
  const url = process.argv[2];
  if (!url) throw new Error('usage: api-instance.ts <database url>');
  const knex = createKnex(url, 4);
  bindModels(knex);
  const logger = createLogger({ level: 'silent' });
  const services = createAccountServices({ knex, config: TEST_CONFIG, logger });
  const app = createApp({ config: TEST_CONFIG, knex, logger, checks: {}, services });
  // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
