/**
 * Charge creation throughput, side by side with a bare endpoint on the same stack.
 *
 *   npx tsx bench/charges.ts [--count N] [--concurrency C]
 *
 * One process runs an embedded PostgreSQL (fresh, temporary), the official Temporal dev server (its
 * own process, bench-started), the acquirer simulator and the API (Koa, same middleware, same auth), and a
 * closed-loop load generator over HTTP on 127.0.0.1. Two endpoints, same run:
 *   - POST /v1/charges: the real thing (validation, prerequisites, insert, cob at the acquirer over
 *     HTTP, BR Code, QR image, workflow start);
 *   - POST /bench/bare: the same validation and auth, then one INSERT of a charge row.
 * Then, to say where a charge's time goes, each piece alone, sequentially: the QR image, the
 * acquirer call, the workflow start and the charge INSERT.
 *
 * Bounded: `count` requests per endpoint (default 1,000) with `concurrency` in flight (default 16).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { createKnex } from '../src/db/knex';
import { migrateAsOwner } from '../src/db';
import { startTemporalProcess } from '../tools/harness/src/stack';
import { connectTemporalClient } from '../src/temporal/connection';
import { chargeWorkflowClient } from '../src/temporal/clients/charge';
import { startAcquirerSimulator } from '../src/acquirer/simulator/server';
import { HttpAcquirer } from '../src/acquirer/http-client';
import { createChargesService } from '../src/services/charges/charges';
import { chargeRoutes } from '../src/http/routes/charges';
import { createAccountServices } from '../src/runtime/composition';
import { createApp } from '../src/http/app';
import { createLogger } from '../src/lib/logger';
import { newId } from '../src/lib/ids';
import { createChargeBody } from '../src/contracts/charges';
import { parseBody } from '../src/http/validation';
import { merchantIdOf } from '../src/http/principal';
import { closeQrRenderer, newTxid, renderQrDataUrl, warmQrRenderer } from '../src/pix';
import type { RouteModule } from '../src/http/types';
import type { Knex } from 'knex';
import type { Acquirer } from '../src/acquirer/types';
import type { ChargeWorkflows } from '../src/temporal/clients/charge';
import type { Logger } from '../src/lib/logger';
import { createApiKeysService } from '../src/services/accounts/api-keys';
import { percentile } from './stats';

export interface LoadResult {
  endpoint: string;
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface PieceResult {
  piece: string;
  p50Ms: number;
  p99Ms: number;
}

export interface ChargesBenchResult {
  load: LoadResult[];
  /** Throughput of charges over bare requests under load (`concurrency` in flight). */
  ratio: number;
  /** The same, one request at a time. */
  serialRatio: number;
  pieces: PieceResult[];
  /** Inside the service, one charge at a time: where the time of a creation goes. */
  breakdown: PieceResult[];
}

async function closedLoop(
  name: string,
  count: number,
  concurrency: number,
  fire: (i: number) => Promise<boolean>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const t = performance.now();
        if (!(await fire(i))) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    endpoint: name,
    requests: count,
    errors,
    perSecond: count / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

async function timed(piece: string, n: number, fn: (i: number) => Promise<unknown>): Promise<PieceResult> {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    latencies.push(performance.now() - t);
  }
  return { piece, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

export async function runChargesBench(
  opts: { count?: number; concurrency?: number } = {},
): Promise<ChargesBenchResult> {
  const count = opts.count ?? 1000;
  const concurrency = opts.concurrency ?? 16;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-'));
  fs.chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), persistent: false, database: 'bench' });
  const knex = createKnex(pg.url, 20);
  const temporalServer = await startTemporalProcess();
  const temporal = await connectTemporalClient(temporalServer.address, 'default');
  const simulator = await startAcquirerSimulator({ callbackSecret: 'bench', clientId: 'b', clientSecret: 'b' });
  const acquirer = new HttpAcquirer({ baseUrl: simulator.url, clientId: 'b', clientSecret: 'b', timeoutMs: 5000 });
  let server: Server | undefined;
  try {
    // Migrations run as the owner role; the service's role owns nothing (docs/production.md "Database roles").
    await migrateAsOwner({ migrationUrl: pg.ownerUrl });
    await warmQrRenderer();
    const logger = createLogger({ level: 'silent' });
    // No worker: charge workflows are started, not run; the bench measures the API's path.
    const workflows = chargeWorkflowClient(temporal.client, `bench-${Date.now()}`);
    const charges = createChargesService({ knex, config: { CHARGE_LIST_CACHE_MS: 3000 }, logger, acquirer, workflows });

    // A ready merchant and an API key, through the real services.
    const merchantId = newId('mch');
    await knex('merchants').insert({
      id: merchantId,
      name: 'Bench',
      document: '11222333000181',
      email: 'bench@x.test',
      kyc_status: 'APPROVED',
      acquirer_account_id: 'acc',
      fee_bps: 99,
      fee_fixed: 0,
      settlement_delay_seconds: 86400,
    });
    await knex('pix_keys').insert({
      id: newId('pxk'),
      merchant_id: merchantId,
      type: 'EMAIL',
      key: 'bench@x.test',
      status: 'ACTIVE',
    });
    const config = {
      JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
      JWT_TTL: 3600,
      API_KEY_PEPPER: 'bench-pepper',
      RATE_LIMIT_RPS: 1_000_000,
      RATE_LIMIT_BURST: 1_000_000,
      BODY_LIMIT_BYTES: 65536,
      MAX_API_KEYS_PER_MERCHANT: 50,
      RATE_LIMIT_ADDRESS_RPS: 1_000_000,
      RATE_LIMIT_ADDRESS_BURST: 1_000_000,
      AUTH_FAILURES_PER_ADDRESS: 1000,
      AUTH_FAILURE_WINDOW_SECONDS: 60,
      LOGIN_MAX_FAILURES_PER_ACCOUNT: 10,
      LOGIN_MAX_FAILURES_PER_ADDRESS: 1000,
      LOGIN_WINDOW_SECONDS: 900,
      PASSWORD_HASH_CONCURRENCY: 2,
      PASSWORD_HASH_QUEUE: 32,
      TRUST_PROXY: false,
      DEFAULT_FEE_BPS: 99,
      DEFAULT_FEE_FIXED: 0,
      DEFAULT_SETTLEMENT_DELAY_SECONDS: 86400,
    };
    const apiKey = await createApiKeysService({ knex, config }).create(merchantId, null, { name: 'bench' });

    const bare: RouteModule = (router, guards) => {
      router.post('/bench/bare', ...guards.authenticated, async (ctx) => {
        const input = parseBody(ctx, createChargeBody);
        const id = newId('ch');
        await knex('charges').insert({
          id,
          merchant_id: merchantIdOf(ctx),
          amount: input.amount,
          description: input.description,
          expires_in: input.expiresIn,
          expires_at: knex.raw(`now() + make_interval(secs => ?)`, [input.expiresIn]),
        });
        ctx.status = 201;
        ctx.body = { charge: { id } };
      });
    };
    const services = createAccountServices({ knex, config, logger });
    const app = createApp({ config, knex, logger, services, routes: [chargeRoutes(charges), bare] });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const addr = server.address();
    const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const body = JSON.stringify({
      amount: 1990,
      description: 'Bench order',
      customer: {
        name: 'Maria',
        email: 'm@x.test',
        phone: '11987654321',
        document: '12345678909',
      },
    });
    const post = (p: string) => async (): Promise<boolean> => {
      const res = await fetch(base + p, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey.value}`, 'content-type': 'application/json' },
        body,
      });
      await res.arrayBuffer();
      return res.status === 201;
    };
    // Warm both paths (JIT, pools, token) before measuring.
    await closedLoop('warm', 50, 4, post('/v1/charges'));
    await closedLoop('warm', 50, 4, post('/bench/bare'));
    const bareResult = await closedLoop(
      `POST /bench/bare (validate + 1 INSERT) c=${concurrency}`,
      count,
      concurrency,
      post('/bench/bare'),
    );
    const chargeResult = await closedLoop(
      `POST /v1/charges (full) c=${concurrency}`,
      count,
      concurrency,
      post('/v1/charges'),
    );
    // One at a time: latency without queueing, the cost of one request end to end.
    const serial = Math.min(200, count);
    const bareSerial = await closedLoop('POST /bench/bare c=1', serial, 1, post('/bench/bare'));
    const chargeSerial = await closedLoop('POST /v1/charges c=1', serial, 1, post('/v1/charges'));

    const n = Math.min(200, count);
    const pieces = [
      await timed('QR image (renderQrDataUrl)', n, () => renderQrDataUrl('00020101021226'.padEnd(180, '7'))),
      await timed('acquirer PUT /cob over HTTP', n, () =>
        acquirer.createCob({ txid: newTxid(), amount: 1990, expiresIn: 3600, key: 'bench@x.test' }),
      ),
      await timed('workflow start (gRPC)', n, (i) =>
        workflows.start({ id: `bench_piece_${Date.now()}_${i}`, merchantId }),
      ),
      await timed('charge INSERT', n, () =>
        knex('charges').insert({
          id: newId('ch'),
          merchant_id: merchantId,
          amount: 1,
          description: 'x',
          expires_in: 60,
          expires_at: knex.raw(`now() + interval '60 seconds'`),
        }),
      ),
      // The database work of one charge with a customer, as the service does it, without the rest.
      await timed('prerequisite reads (merchant ‖ PIX key)', n, () =>
        Promise.all([
          knex('merchants').where({ id: merchantId }).first(),
          knex('pix_keys').where({ merchant_id: merchantId, status: 'ACTIVE' }).orderBy('created_at').first(),
        ]),
      ),
      await timed('charge + customer transaction (4 stmts)', n, () =>
        knex.transaction(async (trx) => {
          const id = newId('ch');
          await trx('charges').insert({
            id,
            merchant_id: merchantId,
            amount: 1,
            description: 'x',
            expires_in: 60,
            expires_at: trx.raw(`now() + interval '60 seconds'`),
          });
          const [c] = (await trx('customers')
            .insert({
              id: newId('cus'),
              merchant_id: merchantId,
              name: 'Maria',
              email: 'm@x.test',
              phone: '11987654321',
              document: '12345678909',
            })
            .onConflict(['merchant_id', 'document'])
            .merge({ name: 'Maria' })
            .returning('id')) as Array<{ id: string }>;
          await trx('charges').where({ id }).update({ customer_id: c?.id });
        }),
      ),
      await timed('BR Code UPDATE', n, () => knex('charges').where({ id: 'none' }).update({ qr_code: 'x' })),
    ];
    const breakdown = await chargeBreakdown({ knex, acquirer, workflows, logger, merchantId, n });
    return {
      breakdown,
      load: [bareResult, chargeResult, bareSerial, chargeSerial],
      ratio: chargeResult.perSecond / bareResult.perSecond,
      serialRatio: chargeSerial.perSecond / bareSerial.perSecond,
      pieces,
    };
  } finally {
    if (server) await new Promise<void>((r) => server?.close(() => r()));
    await closeQrRenderer();
    await simulator.close();
    await temporal.close();
    await temporalServer.stop();
    await knex.destroy();
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where one charge's time goes inside the service (no HTTP): the real `create`, one at a time, with
 * the acquirer and the workflow client wrapped in timers and every SQL statement timed by knex's
 * query events. The image is what is left once those are taken out (it runs beside the BR Code
 * write and the workflow start, so the parts overlap a little and need not add up exactly).
 */
async function chargeBreakdown(d: {
  knex: Knex;
  acquirer: Acquirer;
  workflows: ChargeWorkflows;
  logger: Logger;
  merchantId: string;
  n: number;
}): Promise<PieceResult[]> {
  let acquirerMs = 0;
  let workflowMs = 0;
  let dbMs = 0;
  let statements = 0;
  const startedAt = new Map<string, number>();
  const onQuery = (q: { __knexQueryUid?: string }) => {
    if (q.__knexQueryUid) startedAt.set(q.__knexQueryUid, performance.now());
  };
  const onResponse = (_r: unknown, q: { __knexQueryUid?: string }) => {
    const t = q.__knexQueryUid ? startedAt.get(q.__knexQueryUid) : undefined;
    if (t !== undefined && q.__knexQueryUid) {
      dbMs += performance.now() - t;
      statements++;
      startedAt.delete(q.__knexQueryUid);
    }
  };
  const timedAcquirer: Acquirer = Object.create(d.acquirer) as Acquirer;
  timedAcquirer.createCob = async (req) => {
    const t = performance.now();
    try {
      return await d.acquirer.createCob(req);
    } finally {
      acquirerMs += performance.now() - t;
    }
  };
  const timedWorkflows: ChargeWorkflows = {
    ...d.workflows,
    start: async (c) => {
      const t = performance.now();
      try {
        await d.workflows.start(c);
      } finally {
        workflowMs += performance.now() - t;
      }
    },
  };
  const service = createChargesService({
    knex: d.knex,
    config: { CHARGE_LIST_CACHE_MS: 3000 },
    logger: d.logger,
    acquirer: timedAcquirer,
    workflows: timedWorkflows,
  });
  const rows: Record<string, number[]> = { total: [], db: [], statements: [], acquirer: [], workflow: [], rest: [] };
  d.knex.on('query', onQuery).on('query-response', onResponse);
  try {
    for (let i = 0; i < d.n; i++) {
      acquirerMs = workflowMs = dbMs = statements = 0;
      const t = performance.now();
      await service.create(d.merchantId, {
        amount: 1990,
        description: 'Bench order',
        expiresIn: 86_400,
        customer: { name: 'Maria', email: 'm@x.test', phone: '11987654321', document: '12345678909' },
      });
      const total = performance.now() - t;
      rows.total?.push(total);
      rows.db?.push(dbMs);
      rows.statements?.push(statements);
      rows.acquirer?.push(acquirerMs);
      rows.workflow?.push(workflowMs);
      rows.rest?.push(Math.max(0, total - dbMs - acquirerMs - workflowMs));
    }
  } finally {
    d.knex.removeListener('query', onQuery).removeListener('query-response', onResponse);
  }
  const label: Record<string, string> = {
    total: 'service create(), total',
    db: 'database (4 statements, summed)',
    statements: 'database statements (a count, not ms)',
    acquirer: 'acquirer PUT /cob (incl. OAuth token)',
    workflow: 'workflow start (gRPC)',
    rest: 'the rest (QR image, JS), after overlaps',
  };
  return Object.entries(rows).map(([k, v]) => {
    return { piece: label[k] ?? k, p50Ms: percentile(v, 50), p99Ms: percentile(v, 99) };
  });
}

export function formatChargesBench(r: ChargesBenchResult): string {
  const lines = [`${'endpoint'.padEnd(46)}  req/s    p50 ms   p99 ms  errors`];
  for (const l of r.load) {
    lines.push(
      `${l.endpoint.padEnd(46)} ${l.perSecond.toFixed(0).padStart(6)} ${l.p50Ms.toFixed(2).padStart(9)} ${l.p99Ms.toFixed(2).padStart(8)} ${String(l.errors).padStart(7)}`,
    );
  }
  lines.push(
    `charge / bare throughput ratio: ${r.ratio.toFixed(2)} under load, ${r.serialRatio.toFixed(2)} one at a time`,
    '',
    `${'piece (sequential, alone)'.padEnd(46)} p50 ms   p99 ms`,
  );
  for (const p of r.pieces)
    lines.push(`${p.piece.padEnd(46)} ${p.p50Ms.toFixed(2).padStart(8)} ${p.p99Ms.toFixed(2).padStart(8)}`);
  lines.push('', `${'inside create(), one at a time (no HTTP)'.padEnd(46)} p50 ms   p99 ms`);
  for (const p of r.breakdown)
    lines.push(`${p.piece.padEnd(46)} ${p.p50Ms.toFixed(2).padStart(8)} ${p.p99Ms.toFixed(2).padStart(8)}`);
  return lines.join('\n');
}

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

if (require.main === module) {
  runChargesBench({ count: arg('--count'), concurrency: arg('--concurrency') })
    .then((r) => console.log(formatChargesBench(r)))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
