/**
 * With PostgreSQL unreachable the API answers 503 `{message}` with Retry-After, within a bound —
 * never a 500, never a hang (docs/production.md "Database outages"). The app is the real Koa app over a real
 * knex whose server refuses connections (a free port nobody listens on).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccountServices } from '../../src/runtime/composition';
import { createApp } from '../../src/http/app';
import { createKnex } from '../../src/db/knex';
import { freePort } from '../../src/db/embedded-postgres';
import { isDatabaseUnavailable } from '../../src/db/unavailable';
import { createLogger } from '../../src/lib/logger';
import { TEST_CONFIG } from '../support/api';
import { assertErrorBody } from '../support/errors';

describe('database unavailable → 503', () => {
  it('classifies connection failures, and only them', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.ok(isDatabaseUnavailable(refused));
    assert.ok(
      isDatabaseUnavailable(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    );
    assert.ok(isDatabaseUnavailable(Object.assign(new Error('the database system is starting up'), { code: '57P03' })));
    assert.ok(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')));
    // knex prefixes the statement that failed (seen when PostgreSQL stopped mid-transaction).
    assert.ok(
      isDatabaseUnavailable(new Error('ROLLBACK - Client has encountered a connection error and is not queryable')),
    );
    assert.ok(
      isDatabaseUnavailable(
        Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
      ),
    );
    assert.ok(isDatabaseUnavailable(new AggregateError([refused], 'connect failed')));
    assert.ok(isDatabaseUnavailable(new Error('wrapped', { cause: refused })));
    // objection's DBError keeps the driver's error (with the SQLSTATE) in nativeError.
    const shuttingDown = Object.assign(new Error('the database system is shutting down'), { code: '57P03' });
    assert.ok(
      isDatabaseUnavailable(
        Object.assign(new Error('the database system is shutting down'), {
          name: 'DBError',
          nativeError: shuttingDown,
        }),
      ),
    );
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })), false);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('syntax error'), { code: '42601' })), false);
    assert.equal(isDatabaseUnavailable(new TypeError('x is undefined')), false);
    assert.equal(isDatabaseUnavailable('ECONNREFUSED'), false);
  });

  it('answers 503 {message} with Retry-After on routes that need the database', async function () {
    this.timeout(60_000);
    const knex = createKnex(`postgres://postgres:pixflow@127.0.0.1:${await freePort()}/nowhere`, 2);
    const logger = createLogger({ level: 'silent' });
    const services = createAccountServices({ knex, config: TEST_CONFIG, logger });
    const app = createApp({ config: TEST_CONFIG, knex, logger, checks: {}, services });
    // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
    const handle = app.callback();
    const server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const requests: Array<[string, string, unknown]> = [
        ['POST', '/v1/auth/login', { email: 'a@b.test', password: 'whatever-password' }],
        ['GET', '/v1/api-keys', undefined],
        ['GET', '/v1/merchants/me', undefined],
      ];
      for (const [method, path, body] of requests) {
        const started = Date.now();
        const res = await fetch(base + path, {
          method,
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer pixflow_0123456789abcdefghij0123456789abcdefghij',
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        assert.equal(res.status, 503, `${method} ${path}: ${text}`);
        assertErrorBody(JSON.parse(text) as object, `${method} ${path}`, {
          code: 'service_unavailable',
          headers: res.headers,
        });
        assert.equal(res.headers.get('retry-after'), '5');
        assert.ok(Date.now() - started < 15_000, 'answered within the bound');
      }
      // Readiness says which dependency is down: an error body with the checks beside it.
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 503);
      const { checks, ...error } = (await ready.json()) as { checks: Record<string, string> };
      assert.equal(checks.database, 'failed');
      assertErrorBody(error, 'readyz', { code: 'service_unavailable', headers: ready.headers });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await knex.destroy();
    }
  });
});
