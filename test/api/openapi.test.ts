/**
 * GET /openapi.json: an OpenAPI 3.1 document with every endpoint of the API contract, request
 * schemas generated from the very zod schemas the routes validate with, error shapes and
 * security schemes; every schema in it compiles as JSON Schema 2020-12.
 */
import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { startApi, type TestApi } from '../support/api';
import Router from '@koa/router';
import { createAnyChargeBody, listChargesQuery } from '../../src/contracts/charges';
import { createMerchantBody } from '../../src/contracts/admin';
import { updateUserBody } from '../../src/contracts/admin-access';
import { loginBody } from '../../src/contracts/auth';
import {
  createWithdrawalBody,
  listWithdrawalsQuery,
  sandboxTransferOutcomeBody,
} from '../../src/contracts/withdrawals';
import { createWebhookBody, updateWebhookBody } from '../../src/contracts/webhooks';
import { sandboxRaiseInfractionBody } from '../../src/contracts/infractions';
import type { AppState, RouteModule } from '../../src/http/types';
import { acquirerCallbackRoutes } from '../../src/http/routes/acquirer-callbacks';
import { adminAccessRoutes } from '../../src/http/routes/admin-access';
import { adminRoutes } from '../../src/http/routes/admin';
import { apiKeyRoutes } from '../../src/http/routes/api-keys';
import { authRoutes } from '../../src/http/routes/auth';
import { chargeRoutes } from '../../src/http/routes/charges';
import { healthRoutes } from '../../src/http/routes/health';
import { infractionSandboxRoutes } from '../../src/http/routes/sandbox/infractions';
import { merchantRoutes } from '../../src/http/routes/merchants';
import { metricsRoutes } from '../../src/http/routes/metrics';
import { sandboxRoutes } from '../../src/http/routes/sandbox/charges';
import { webhookRoutes } from '../../src/http/routes/webhooks';
import { withdrawalSandboxRoutes } from '../../src/http/routes/sandbox/withdrawals';
import { withdrawalRoutes } from '../../src/http/routes/withdrawals';
import { API_ENDPOINTS } from '../support/api-endpoints';
import { assertResponseMatchesDocument } from '../support/openapi-validator';
import { CHARGE_REPLAY_EXAMPLE } from '../../src/openapi/document';

/**
 * Every [method, OpenAPI path] the route modules register. Handlers never run here, so the
 * services they close over are left out.
 */
function registeredRoutes(): Array<[string, string]> {
  const unused = {} as never;
  const modules: RouteModule[] = [
    authRoutes(unused),
    apiKeyRoutes(unused),
    merchantRoutes(unused, unused),
    adminRoutes(unused),
    adminAccessRoutes(unused),
    chargeRoutes(unused, unused),
    withdrawalRoutes(unused),
    webhookRoutes(unused),
    acquirerCallbackRoutes({ secret: 'unused', callbacks: unused }),
    sandboxRoutes(unused),
    withdrawalSandboxRoutes(unused),
    infractionSandboxRoutes(unused),
    healthRoutes({}),
    metricsRoutes(),
  ];
  const router = new Router<AppState>();
  for (const register of modules) register(router, { anonymous: [], authenticated: [], jwtOnly: [], admin: [] });
  const routes: Array<[string, string]> = [];
  for (const layer of router.stack) {
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      routes.push([method.toLowerCase(), String(layer.path).replace(/:([A-Za-z]+)/g, '{$1}')]);
    }
  }
  return routes;
}

interface Operation {
  security: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; schema: unknown }>;
  requestBody?: { content: Record<string, { schema: unknown } | undefined> };
  responses: Record<string, { content?: { 'application/json': { schema: Record<string, unknown> } } }>;
}
interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; scheme?: string }> };
}

const generated = (schema: z.ZodType): unknown => {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
};

describe('OpenAPI document', function () {
  this.timeout(60_000);
  let api: TestApi;
  let doc: Doc;

  before(async () => {
    api = await startApi();
    const res = await fetch(`${api.baseUrl}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    doc = (await res.json()) as Doc;
  });
  after(() => api.close());

  const op = (method: string, path: string): Operation => {
    const o = doc.paths[path]?.[method];
    assert.ok(o, `${method.toUpperCase()} ${path} is documented`);
    return o;
  };

  it('is OpenAPI 3.1 and documents every endpoint of the contract', () => {
    assert.equal(doc.openapi, '3.1.0');
    for (const [method, path] of API_ENDPOINTS) op(method, path);
  });

  it('documents every route the route modules register', () => {
    const routes = registeredRoutes();
    assert.ok(routes.length > 40, `${routes.length} routes found`);
    for (const [method, path] of routes) op(method, path);
  });

  it('takes the withdrawal, webhook, sandbox and access schemas from src/contracts, as the routes do', () => {
    const body = (method: string, path: string) => op(method, path).requestBody?.content['application/json']?.schema;
    assert.deepEqual(body('post', '/v1/merchants/me/withdrawals'), generated(createWithdrawalBody));
    assert.deepEqual(body('post', '/v1/webhooks/merchant'), generated(createWebhookBody));
    assert.deepEqual(body('patch', '/v1/webhooks/merchant/{id}'), generated(updateWebhookBody));
    assert.deepEqual(body('patch', '/v1/admin/users/{id}'), generated(updateUserBody));
    assert.deepEqual(body('post', '/v1/sandbox/infractions'), generated(sandboxRaiseInfractionBody));
    assert.deepEqual(body('post', '/v1/sandbox/withdrawals/{id}/fail'), generated(sandboxTransferOutcomeBody));
    const query = op('get', '/v1/merchants/me/withdrawals').parameters?.filter((p) => p.in === 'query') ?? [];
    const expected = (generated(listWithdrawalsQuery) as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(Object.fromEntries(query.map((p) => [p.name, p.schema])), expected);
    assert.ok(op('get', '/v1/merchants/me/withdrawals/{id}').responses['404']);
  });

  it('takes request schemas from the schemas the routes validate with', () => {
    assert.deepEqual(
      op('post', '/v1/charges').requestBody?.content['application/json']?.schema,
      generated(createAnyChargeBody),
    );
    assert.deepEqual(
      op('post', '/v1/auth/login').requestBody?.content['application/json']?.schema,
      generated(loginBody),
    );
    assert.deepEqual(
      op('post', '/v1/admin/merchants').requestBody?.content['application/json']?.schema,
      generated(createMerchantBody),
    );
    const query = op('get', '/v1/charges').parameters?.filter((p) => p.in === 'query') ?? [];
    const expected = (generated(listChargesQuery) as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(Object.fromEntries(query.map((p) => [p.name, p.schema])), expected);
    assert.ok(op('post', '/v1/charges').parameters?.some((p) => p.in === 'header' && p.name === 'x-idempotency-key'));
  });

  it('describes responses and the {message, code, requestId} error shape', () => {
    const created = op('post', '/v1/charges').responses['201']?.content?.['application/json'].schema as {
      properties: { charge: { required: string[] } };
    };
    for (const field of ['id', 'txid', 'qrCode', 'imageBase64', 'amount', 'status', 'expiresIn', 'customer']) {
      assert.ok(created.properties.charge.required.includes(field), `charge.${field}`);
    }
    assert.deepEqual((doc.components.schemas.Error as { required: string[] }).required, [
      'message',
      'code',
      'requestId',
    ]);
    const errorRef = { $ref: '#/components/schemas/Error' };
    assert.deepEqual(op('post', '/v1/charges').responses['400']?.content?.['application/json'].schema, errorRef);
    assert.deepEqual(
      op('delete', '/v1/api-keys/{id}').responses['404']?.content?.['application/json'].schema,
      errorRef,
    );
    assert.ok(op('post', '/v1/charges').responses['403'], 'prerequisites unmet');
    assert.ok(op('post', '/v1/charges').responses['422'], 'invalid payer document');
  });

  it('shows the charge replay: any body under a used key is 200 with the original charge, marked Idempotent-Replayed', () => {
    const replay = op('post', '/v1/charges').responses['200'] as unknown as {
      description: string;
      headers: Record<string, unknown>;
      content: { 'application/json': { examples: Record<string, { value: unknown }> } };
    };
    assert.match(replay.description, /whatever the body/);
    assert.ok(replay.headers['Idempotent-Replayed']);
    const example = replay.content['application/json'].examples.replay?.value;
    assert.deepEqual(example, CHARGE_REPLAY_EXAMPLE.value);
    assertResponseMatchesDocument('POST', '/v1/charges', 200, 'application/json', example);
    const header = op('post', '/v1/charges').parameters?.find((p) => p.name === 'x-idempotency-key') as
      { description: string } | undefined;
    assert.match(header?.description ?? '', /whatever the body/);
    assert.doesNotMatch(header?.description ?? '', /422/);
    const withdraw = op('post', '/v1/merchants/me/withdrawals');
    assert.ok(withdraw.responses['422'], 'a withdrawal keeps 422 for another body');
  });

  it('declares the security schemes and which endpoint takes which credential', () => {
    assert.equal(doc.components.securitySchemes.bearerJwt?.scheme, 'bearer');
    assert.equal(doc.components.securitySchemes.apiKey?.scheme, 'bearer');
    assert.equal(doc.components.securitySchemes.acquirerSignature?.type, 'apiKey');
    assert.deepEqual(op('post', '/v1/auth/login').security, []);
    assert.deepEqual(op('delete', '/v1/api-keys/{id}').security, [{ bearerJwt: [] }]);
    assert.deepEqual(op('get', '/v1/charges').security, [{ bearerJwt: [] }, { apiKey: [] }]);
    assert.deepEqual(op('get', '/v1/webhooks/merchant').security, [{ bearerJwt: [] }, { apiKey: [] }]);
    // A delivery is authenticated by either signature it carries (docs/api.md "Receiving webhooks").
    for (const [event, hook] of Object.entries(doc.webhooks)) {
      assert.deepEqual(hook.post.security, [{ standardWebhookSignature: [] }, { webhookSignature: [] }], event);
    }
    assert.equal(doc.components.securitySchemes.webhookSignature?.type, 'apiKey');
    assert.equal(doc.components.securitySchemes.standardWebhookSignature?.type, 'apiKey');
  });

  it('has only schemas that compile as JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components } as object);
    let count = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(methods)) {
        const schemas = [
          ...Object.values(o.requestBody?.content ?? {}).map((c) => c?.schema),
          ...Object.values(o.responses).map((r) => r.content?.['application/json']?.schema),
        ];
        for (const s of schemas) {
          if (!s || '$ref' in (s as object)) continue;
          assert.doesNotThrow(() => ajv.compile(s as object), `${method} ${path}`);
          count += 1;
        }
      }
    }
    assert.ok(count > 30);
  });
});
