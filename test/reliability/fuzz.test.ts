/**
 * Property-based fuzzing (fast-check) of every route of the API: random path parameters (real
 * ids of another merchant, unknown ids, malformed percent-encoding, huge strings), query strings
 * (unknown keys, repeated keys, non-numbers), headers (content types, encodings, credentials,
 * idempotency keys) and bodies (arbitrary JSON, templates of the route's own fields with values
 * of any type, garbage, deep nesting). Property: never a 5xx, and every 4xx is a JSON `{message}`.
 * The app is the real composition root (`startApi` of src/runtime/processes.ts, as `npm start`
 * builds it, with the in-process acquirer simulator and its sandbox routes) over the run's
 * PostgreSQL and an official Temporal dev server of the harness (`temporal server start-dev`).
 * Bounded: FUZZ_RUNS cases per route.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import Mocha from 'mocha';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { openAcquirer, type AcquirerHandle } from '../../src/acquirer';
import { startApi as startService, type RunningApi } from '../../src/runtime/processes';
import { ensureAdmin } from '../../src/services/accounts/admin-bootstrap';
import { getTestDb } from '../support/db';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { startStack, type Stack, STACK_ADMIN } from '../../tools/harness/src/stack';
import {
  call,
  login,
  readyMerchant,
  registerWebhook,
  withdrawalBody,
  type ReadyMerchant,
} from '../../tools/harness/src/client';
import { routesOf, type RouteEntry } from '../security/routes';
import { assertErrorBody } from '../support/errors';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 50);

type Auth = 'none' | 'key' | 'jwt' | 'admin';

/**
 * The routes fuzzed are the ones the app's router really mounts (test/security/routes.ts), so a
 * route added later is fuzzed without anyone listing it here. What the mounted list cannot say is
 * kept below: the body fields of a route (templates for the body generator; a route not named here
 * gets arbitrary JSON) and which credential passes its guard.
 */
const FIELDS: Record<string, string[]> = {
  'POST /v1/auth/login': ['email', 'password'],
  'POST /v1/api-keys': ['name', 'description'],
  'POST /v1/charges': ['amount', 'description', 'expiresIn', 'customer', 'tracking'],
  'POST /v1/charges/:id/refund': ['amount', 'reason'],
  'POST /v1/merchants/me/withdrawals': ['amount', 'pixKeyType', 'pixKey', 'description'],
  'POST /v1/webhooks/merchant': ['url', 'name', 'events'],
  'PATCH /v1/webhooks/merchant/:id': ['url', 'name', 'events', 'status'],
  'POST /v1/sandbox/charges/:id/pay': ['payer'],
  'POST /v1/sandbox/infractions': ['chargeId', 'reason'],
  'POST /v1/sandbox/withdrawals/:id/complete': ['reason'],
  'POST /v1/sandbox/withdrawals/:id/fail': ['reason'],
  'POST /v1/sandbox/withdrawals/:id/return': ['reason'],
  'POST /v1/acquirer/pix': ['pix'],
  'POST /v1/acquirer/transfers': ['transfer'],
  'POST /v1/acquirer/infractions': ['infraction'],
  'POST /v1/acquirer/pix-keys': ['key'],
  'POST /v1/admin/merchants': ['name', 'document', 'email', 'password', 'feeBps', 'feeFixed', 'settlementDelaySeconds'],
  'PATCH /v1/admin/merchants/:id': [
    'kycStatus',
    'status',
    'acquirerAccountId',
    'feeBps',
    'feeFixed',
    'settlementDelaySeconds',
  ],
  'POST /v1/admin/merchants/:id/adjustments': ['amount', 'reason'],
  'POST /v1/admin/merchants/:id/pix-keys': ['type', 'key'],
  'PATCH /v1/admin/merchants/:id/pix-keys/:keyId': ['status'],
  'PATCH /v1/admin/users/:id': ['status'],
};
/** Routes that take a user's JWT and refuse an API key (docs/api.md "Auth hardening"). */
const JWT_ONLY = new Set(['POST /v1/api-keys', 'DELETE /v1/api-keys/:id']);

function authOf(method: string, path: string): Auth {
  if (JWT_ONLY.has(`${method} ${path}`)) return 'jwt';
  if (path.startsWith('/v1/admin/')) return 'admin';
  if (!path.startsWith('/v1/') || path.startsWith('/v1/auth/') || path.startsWith('/v1/acquirer/')) return 'none';
  return 'key';
}

/** Printable ASCII only: what fetch lets a header carry. */
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, '');

const nasty = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '%',
  '%00',
  '%E0%A4%A',
  '%ZZ',
  '%2F..%2F',
  '..',
  "' OR 1=1 --",
  '<script>',
  'a'.repeat(5000),
  '\u0000',
  '😀',
  'ch_01H0000000000000000000000',
  '9'.repeat(40),
);
const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => Number(b)),
  nasty,
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 4 }),
);

function bodyArb(fields: string[] | undefined): fc.Arbitrary<string | undefined> {
  const template =
    fields && fields.length > 0
      ? fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: fields.length + 1 }).map((o) => JSON.stringify(o))
      : fc.json({ maxDepth: 2 });
  return fc.oneof(
    { weight: 5, arbitrary: template },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '['.repeat(20_000),
        '{"a":'.repeat(5_000),
        '{"amount": 1e400}',
        '{"__proto__": {"admin": true}}',
        '{"constructor": {"prototype": {"x": 1}}}',
        '\uFEFF{}',
        '{"a":1,"a":2}',
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const queryArb = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom('page', 'limit', 'status', 'targetId', 'merchantId', 'page[]', 'limit[a]'),
      fc.string({ maxLength: 10 }),
    ),
    fc.oneof(nasty, fc.string({ maxLength: 20 }), fc.integer().map(String)),
  ),
  { maxLength: 5 },
);

interface Ids {
  /** Ids of another merchant's resources, and of this merchant's where harmless. */
  path: Record<string, string[]>;
}

describe('reliability: fuzzing every route (fast-check)', function () {
  this.timeout(600_000);
  let stack: Stack;
  let acquirer: AcquirerHandle;
  let service: RunningApi;
  let base: string;
  let me: ReadyMerchant;
  let adminToken: string;
  const ids: Ids = { path: {} };
  const fuzzedMerchants: string[] = [];
  let mounted: RouteEntry[] = [];

  before(async function () {
    const { url, knex } = await getTestDb();
    // The stack's Temporal server only (no worker: workflows started here never run).
    stack = await startStack({ databaseUrl: url });
    const config = loadConfig({
      ...stack.env,
      ACQUIRER_URL: undefined,
      ACQUIRER_SANDBOX: undefined,
      PORT: '0',
      SIMULATOR_AUTO_COMPLETE: 'false',
    });
    const logger = createLogger({ level: 'silent' });
    await ensureAdmin(knex, config);
    acquirer = await openAcquirer(config);
    service = await startService({ config, logger, knex, temporalAddress: stack.temporalAddress, acquirer });
    base = service.url;
    me = await readyMerchant(base, { fund: 100_000 });
    adminToken = await login(base, STACK_ADMIN.email, STACK_ADMIN.password);
    // Another merchant's real resources: the fuzzer's path ids (404 for `me`, real for the admin).
    const other = await readyMerchant(base, { fund: 100_000 });
    fuzzedMerchants.push(me.merchantId, other.merchantId);
    const charge = await call<{ charge: { id: string } }>(base, 'POST', '/v1/charges', {
      token: other.apiKey,
      body: { amount: 500, description: 'fuzz' },
    });
    const mine = await call<{ charge: { id: string } }>(base, 'POST', '/v1/charges', {
      token: me.apiKey,
      body: { amount: 500, description: 'fuzz' },
    });
    const hook = await registerWebhook(base, other.apiKey, 'http://127.0.0.1:9/fuzz', []);
    const withdrawal = await call<{ withdraw: { id: string } }>(base, 'POST', '/v1/merchants/me/withdrawals', {
      token: other.apiKey,
      body: withdrawalBody(100),
    });
    const users = await call<{ users: Array<{ id: string }> }>(
      base,
      'GET',
      `/v1/admin/merchants/${other.merchantId}/users`,
      { token: adminToken },
    );
    const keys = await call<{ apiKeys: Array<{ id: string }> }>(base, 'GET', '/v1/api-keys', { token: other.apiKey });
    const profile = await call<{ merchant: { pixKey?: { id?: string } | null } }>(base, 'GET', '/v1/merchants/me', {
      token: other.apiKey,
    });
    ids.path = {
      id: [
        other.merchantId,
        charge.body.charge?.id,
        mine.body.charge?.id,
        hook.id,
        withdrawal.body.withdraw?.id,
        profile.body.merchant?.pixKey?.id,
        users.body.users?.[0]?.id,
        keys.body.apiKeys?.[0]?.id,
      ].filter((x): x is string => typeof x === 'string'),
      keyId: [profile.body.merchant?.pixKey?.id].filter((x): x is string => typeof x === 'string'),
      deliveryId: ['whd_unknown'],
      asset: ['swagger-ui.css', 'swagger-ui-bundle.js', 'index.html'],
    };
    // One test per mounted route, registered now that the app exists (mocha reads a suite's tests
    // after its before hooks), then the closing check.
    mounted = routesOf(service.app);
    const suite = this.test?.parent;
    if (!suite) throw new Error('no suite to register the route tests on');
    for (const r of mounted) {
      suite.addTest(new Mocha.Test(`${r.method} ${r.path}: never 5xx, every 4xx is {message}`, fuzzRoute(r)));
    }
    suite.addTest(
      new Mocha.Test('the fuzzed merchants can still be served, and their books reconcile', booksReconcile),
    );
  });

  after(async () => {
    await service?.stop();
    await acquirer?.close();
    await stack?.stop();
  });

  it('fuzzes what the router mounts, sandbox routes included; its field hints name mounted routes', () => {
    const keys = new Set(mounted.map((r) => `${r.method} ${r.path}`));
    for (const hint of [...Object.keys(FIELDS), ...JWT_ONLY])
      assert.ok(keys.has(hint), `a hint for ${hint}, which is not mounted`);
    assert.ok(mounted.filter((r) => r.path.startsWith('/v1/sandbox/')).length >= 9, [...keys].join('\n'));
  });

  function fuzzRoute({ method, path: template }: RouteEntry): () => Promise<void> {
    const auth = authOf(method, template);
    const fields = FIELDS[`${method} ${template}`];
    return async () => {
      const token = (): string | undefined =>
        auth === 'admin' ? adminToken : auth === 'jwt' ? me.token : auth === 'key' ? me.apiKey : undefined;
      const params = [...template.matchAll(/:(\w+)/g)].map((mm) => mm[1] as string);
      const paramArb = (name: string): fc.Arbitrary<string> =>
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...(ids.path[name]?.length ? ids.path[name] : ['x'])) },
          { weight: 2, arbitrary: fc.string({ maxLength: 60 }).map(encodeURIComponent) },
          { weight: 2, arbitrary: nasty.map((s) => (/%/.test(s) ? s : encodeURIComponent(s))) },
        );
      const caseArb = fc.record({
        params: fc.tuple(...(params.length > 0 ? params.map(paramArb) : [fc.constant('')])),
        query: queryArb,
        body: bodyArb(fields),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
          'garbage',
          undefined,
        ),
        encoding: fc.constantFrom(undefined, undefined, undefined, 'gzip', 'br', 'deflate', 'identity', 'bogus'),
        authorization: fc.oneof(
          { weight: 6, arbitrary: fc.constant('valid') },
          { weight: 1, arbitrary: fc.constant('none') },
          { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((s) => `Bearer ${headerSafe(s)}`) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'Basic YTpi',
              'Bearer ',
              'Bearer pixflow_',
              'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
              'bearer  x  y',
            ),
          },
        ),
        idempotencyKey: fc.option(fc.string({ maxLength: 80 }).map(headerSafe), { nil: undefined }),
        extra: fc.dictionary(
          fc.constantFrom('x-forwarded-for', 'x-request-id', 'accept', 'x-acquirer-signature', 'content-length-x'),
          fc.string({ maxLength: 40 }).map(headerSafe),
          { maxKeys: 3 },
        ),
      });
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          let p = template;
          params.forEach((name, i) => {
            p = p.replace(`:${name}`, c.params[i] as string);
          });
          const qs = c.query
            .map(([k, v]) => `${encodeURIComponent(k)}=${/%/.test(v) ? v : encodeURIComponent(v)}`)
            .join('&');
          const headers: Record<string, string> = { ...c.extra };
          const t = token();
          if (c.authorization === 'valid') {
            if (t) headers.authorization = `Bearer ${t}`;
          } else if (c.authorization !== 'none') headers.authorization = c.authorization;
          if (c.contentType && c.body !== undefined) headers['content-type'] = c.contentType;
          if (c.encoding && c.body !== undefined) headers['content-encoding'] = c.encoding;
          if (c.idempotencyKey !== undefined) headers['x-idempotency-key'] = c.idempotencyKey;
          const hasBody = c.body !== undefined && method !== 'GET';
          const res = await fetch(`${base}${p}${qs ? `?${qs}` : ''}`, {
            method,
            headers,
            body: hasBody ? c.body : undefined,
            signal: AbortSignal.timeout(30_000),
          });
          const text = await res.text();
          const what = `${method} ${p}${qs ? `?${qs}` : ''} → ${res.status} ${text.slice(0, 200)}`;
          assert.ok(res.status < 500, what);
          if (res.status >= 400) {
            assert.match(res.headers.get('content-type') ?? '', /application\/json/, what);
            const parsed = JSON.parse(text) as Record<string, unknown>;
            assertErrorBody(parsed, what);
            assert.equal(typeof parsed.message, 'string', what);
          }
        }),
        { numRuns: FUZZ_RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
      );
    };
  }

  async function booksReconcile(): Promise<void> {
    const res = await call<{ balance: { available: number } }>(base, 'GET', '/v1/merchants/me/balance', {
      token: me.apiKey,
    });
    assert.equal(res.status, 200);
    const report = await checkLedgerInvariant((await getTestDb()).knex, { merchantIds: fuzzedMerchants });
    assert.ok(report.ok, JSON.stringify(report.violations));
  }
});
