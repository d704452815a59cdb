/**
 * The external baseline of `npm run bench` (docs/performance.md "Method"): the ceiling of our stack for one
 * write — a bare Koa + koa-body server whose one route validates nothing and does one
 * `INSERT … RETURNING` through a plain pg pool. It runs in its own process so that it shares
 * nothing with the service but the machine and the database server.
 *
 *   DATABASE_URL=postgres://… PORT=0 npx tsx bench/baseline-server.ts   → prints `listening <port>`
 *
 * With BASELINE_TEMPORAL_ADDRESS set, `POST /insert-and-start` also starts a durable workflow run
 * parked in a start delay after the insert, as a charge's run is started (what a durable charge
 * costs at least, docs/performance.md "Where a charge's time goes"): the cheapest endpoint that
 * keeps that guarantee.
 */
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import pg from 'pg';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
  await pool.query(
    'create table if not exists bench_baseline (id bigserial primary key, body jsonb not null, created_at timestamptz not null default now())',
  );
  const temporalAddress = process.env.BASELINE_TEMPORAL_ADDRESS;
  // A Rust-core connection, as the service's client (TEMPORAL_CLIENT_NATIVE).
  const connection = temporalAddress ? await NativeConnection.connect({ address: temporalAddress }) : undefined;
  const client = connection ? new Client({ connection }) : undefined;
  const app = new Koa();
  app.use(koaBody());
  app.use(async (ctx) => {
    const durable = ctx.path === '/insert-and-start' && client !== undefined;
    if (ctx.method !== 'POST' || (ctx.path !== '/insert' && !durable)) {
      ctx.status = 404;
      return;
    }
    const { rows } = await pool.query<{ id: string }>('insert into bench_baseline (body) values ($1) returning id', [
      JSON.stringify(ctx.request.body ?? {}),
    ]);
    const id = rows[0]?.id;
    if (durable) {
      // No worker polls this queue: the run waits out its delay, as an unpaid charge's does.
      await client.workflow.start('floorChargeWorkflow', {
        workflowId: `baseline-charge-${id}`,
        taskQueue: 'baseline',
        startDelay: '1 hour',
      });
    }
    ctx.status = 201;
    ctx.body = { id };
  });
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
  const stop = (): void => {
    server.close();
    void Promise.all([pool.end(), connection?.close()]).then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
