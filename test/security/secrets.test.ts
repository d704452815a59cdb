/**
 * OWASP API3/API8 (excessive data exposure, security misconfiguration): no password, JWT, API key
 * value, webhook secret or callback secret in the service's logs (captured pino output of a whole
 * scenario at the most verbose level), in list responses (masked) or in error bodies (always
 * `{message}`, never a stack or SQL); no password, API key value or JWT in clear anywhere in the
 * database.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../../src/acquirer/callback-signature';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { chargeRoutes } from '../../src/http/routes/charges';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { createLogger } from '../../src/lib/logger';
import { createAcquirerCallbacks } from '../../src/services/inbox/acquirer-callbacks';
import { createChargesService } from '../../src/services/charges/charges';
import { createWebhooksService } from '../../src/services/webhooks/webhooks';
import { startApi, TEST_ADMIN, type LoginBody, type TestApi } from '../support/api';
import { CALLBACK_SECRET, chargesStack } from '../support/charges';
import { WEBHOOKS_TEST_CONFIG } from '../support/webhooks';
import { assertErrorBody } from '../support/errors';

describe('security: secrets in logs, responses and the database', function () {
  this.timeout(60_000);
  let api: TestApi;
  let logs = '';
  /** Every secret the scenario handles, by what it is. */
  const secrets: Record<string, string> = {};

  before(async () => {
    const c = await chargesStack();
    const logger = createLogger({
      level: 'trace',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          logs += chunk.toString('utf8');
          done();
        },
      }),
    });
    const knex = c.api.knex;
    api = await startApi({
      deps: {
        logger,
        routes: [
          chargeRoutes(
            createChargesService({
              knex,
              config: { CHARGE_LIST_CACHE_MS: 0 },
              logger,
              acquirer: c.acquirer,
              workflows: c.workflows,
            }),
          ),
          acquirerCallbackRoutes({
            secret: CALLBACK_SECRET,
            callbacks: createAcquirerCallbacks({ knex, workflows: c.workflows, logger, acquirer: c.acquirer }),
          }),
          webhookRoutes(createWebhooksService({ knex, config: WEBHOOKS_TEST_CONFIG })),
        ],
      },
    });
    secrets.JWT_SECRET = api.config.JWT_SECRET;
    secrets.API_KEY_PEPPER = api.config.API_KEY_PEPPER;
    secrets.callbackSecret = CALLBACK_SECRET;
    secrets.adminPassword = TEST_ADMIN.password;

    // The scenario: logins (good and bad), a merchant, an API key used, a webhook created and
    // rotated, lists, signed and unsigned callbacks, and a handful of errors.
    const password = `pw-${Date.now()}-secret`;
    const m = await api.createMerchant({ password });
    secrets.merchantPassword = password;
    secrets.merchantJwt = m.token;
    secrets.adminJwt = await api.adminToken();
    const wrong = await api.request('POST', '/v1/auth/login', {
      body: { email: m.email, password: 'a-wrong-password-42' },
    });
    assert.equal(wrong.status, 401);
    secrets.wrongPassword = 'a-wrong-password-42';
    const key = await api.createApiKey(m.token);
    secrets.apiKey = key.value;
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: key.value })).status, 200);
    assert.equal((await api.request('GET', '/v1/merchants/me', { token: `${key.value}0` })).status, 401);
    const hook = await api.request<{ webhook: { id: string; secret: string } }>('POST', '/v1/webhooks/merchant', {
      token: key.value,
      body: { url: 'https://example.com/hook' },
    });
    assert.equal(hook.status, 201);
    secrets.webhookSecret = hook.body.webhook.secret;
    const rotated = await api.request<{ webhook: { secret: string } }>(
      'POST',
      `/v1/webhooks/merchant/${hook.body.webhook.id}/rotate-secret`,
      {
        token: m.token,
      },
    );
    assert.equal(rotated.status, 200);
    secrets.rotatedWebhookSecret = rotated.body.webhook.secret;
    const body = JSON.stringify({
      pix: [{ endToEndId: `E${Date.now()}${'7'.repeat(18)}`, valor: '1.00', horario: new Date().toISOString() }],
    });
    const signature = signCallback(CALLBACK_SECRET, body);
    secrets.callbackSignature = signature;
    for (const sig of [signature, signature.replace(/.$/, (c) => (c === '0' ? '1' : '0'))]) {
      await fetch(`${api.baseUrl}/v1/acquirer/pix`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: sig },
        body,
      });
    }
    await api.request('POST', '/v1/auth/login', { rawBody: `{"email":"${m.email}","password":"${password}"` });
    await api.request('POST', '/v1/charges', { token: key.value, body: { amount: 'x', description: password } });
  });
  after(() => api.close());

  it('the captured logs (trace level) hold no password, JWT, API key, webhook or callback secret', () => {
    assert.ok(logs.length > 1000, 'the scenario was logged');
    for (const [what, value] of Object.entries(secrets)) {
      assert.ok(!logs.includes(value), `the logs contain the ${what}`);
    }
    // Nor any part of a JWT that could be replayed (its signature) or the API key without its prefix.
    assert.ok(!logs.includes(secrets.merchantJwt!.split('.')[2]!), 'the logs contain a JWT signature');
    assert.ok(!logs.includes(secrets.apiKey!.slice(-20)), 'the logs contain the API key body');
  });

  it('lists mask API keys and webhook secrets', async () => {
    const keys = await api.request<{ apiKeys: Array<{ value: string }> }>('GET', '/v1/api-keys', {
      token: secrets.merchantJwt,
    });
    const hooks = await api.request<{ webhooks: unknown[] }>('GET', '/v1/webhooks/merchant', {
      token: secrets.merchantJwt,
    });
    const text = JSON.stringify(keys.body) + JSON.stringify(hooks.body);
    assert.equal(keys.body.apiKeys.length, 1);
    assert.match(keys.body.apiKeys[0]!.value, /\*{4}/);
    for (const what of ['apiKey', 'webhookSecret', 'rotatedWebhookSecret', 'merchantPassword']) {
      assert.ok(!text.includes(secrets[what]!), `a list contains the ${what}`);
    }
  });

  it('error bodies are {message} with no stack, SQL or driver detail, whatever the input', async () => {
    const token = secrets.merchantJwt;
    const attempts: Array<[string, string, { rawBody?: string; body?: unknown }]> = [
      ['POST', '/v1/charges', { rawBody: '{"amount": 1,' }],
      ['POST', '/v1/charges', { rawBody: '[]' }],
      ['POST', '/v1/charges', { body: { amount: 1e300, description: 'x' } }],
      ['POST', '/v1/charges', { body: { amount: 100, description: "x'; drop table charges; --" } }],
      ['GET', `/v1/charges/${encodeURIComponent("' or 1=1 --")}`, {}],
      ['GET', `/v1/charges/${'x'.repeat(300)}`, {}],
      ['GET', '/v1/charges/%E0%A4%A', {}],
      ['GET', '/v1/charges?limit=abc&page=-1', {}],
      ['GET', `/v1/charges?status=${encodeURIComponent("PAID' or '1'='1")}`, {}],
      ['PATCH', '/v1/webhooks/merchant/wh_x', { body: { events: ['nope'] } }],
      ['POST', '/v1/webhooks/merchant', { body: { url: 'javascript:alert(1)' } }],
      ['GET', '/v1/does-not-exist', {}],
      ['DELETE', '/v1/charges', {}],
    ];
    for (const [method, path, opts] of attempts) {
      const res = await api.request<Record<string, unknown>>(method, path, { token, ...opts });
      const text = JSON.stringify(res.body);
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status} ${text}`);
      assertErrorBody(res.body, `${method} ${path}: ${text}`);
      assert.doesNotMatch(
        text,
        /\bat .+:\d+:\d+|node_modules|stack|select |insert |update |relation "|syntax error|knex|pg-protocol|violates/i,
        `${method} ${path}: ${text}`,
      );
    }
  });

  it('no password, API key value, JWT or webhook secret is stored in clear in any table', async () => {
    const tables = (await api.knex('pg_tables').where({ schemaname: 'public' }).pluck('tablename')) as string[];
    assert.ok(tables.includes('users') && tables.includes('api_keys'));
    const needles = [
      'merchantPassword',
      'adminPassword',
      'wrongPassword',
      'apiKey',
      'merchantJwt',
      'adminJwt',
      // Webhook secrets are encrypted at rest (docs/operations.md "Webhook secret encryption").
      'webhookSecret',
      'rotatedWebhookSecret',
    ];
    for (const table of tables) {
      for (const what of needles) {
        const value = secrets[what]!;
        const [row] = (
          await api.knex.raw(`select count(*)::int as n from ?? t where strpos(row_to_json(t)::text, ?) > 0`, [
            table,
            value,
          ])
        ).rows as Array<{ n: number }>;
        assert.equal(row?.n, 0, `${table} holds the ${what} in clear`);
      }
    }
    // What is stored instead: an argon2 hash of the password and a keyed hash of the API key.
    const user = (await api
      .knex('users')
      .whereRaw('lower(email) = lower(?)', [
        (
          await api.request<LoginBody>('POST', '/v1/auth/login', {
            body: { email: TEST_ADMIN.email, password: TEST_ADMIN.password },
          })
        ).body.user.email,
      ])
      .first('password_hash')) as { password_hash: string };
    assert.match(user.password_hash, /^\$argon2id\$/);
  });
});
