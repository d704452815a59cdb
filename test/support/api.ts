/**
 * The app under test: the real Koa app from createApp on an ephemeral port, over the run's
 * embedded PostgreSQL (test/support/db.ts), spoken to with global fetch. Charges, withdrawals and
 * webhooks suites reuse it:
 *
 *   const api = await startApi();                     // or startApi({ config: { RATE_LIMIT_BURST: 3 } })
 *   const m = await api.createMerchant();             // merchant + USER + JWT
 *   const key = await api.createApiKey(m.token);
 *   const res = await api.request('GET', '/v1/api-keys', { token: key.value });
 *   after(() => api.close());
 *
 * Fixtures use random e-mails and documents, so suites can share the run's database. Every response
 * is checked against the OpenAPI document (test/support/openapi-validator.ts).
 */
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import type { Knex } from 'knex';
import type Koa from 'koa';
import { createApp, type AppDeps } from '../../src/http/app';
import type { AppConfig } from '../../src/config';
import type { CreatedPixKey } from '../../src/services/accounts/merchants';
import { createAccountServices } from '../../src/runtime/composition';
import type { AppState } from '../../src/http/types';
import { createLogger } from '../../src/lib/logger';
import { ensureAdmin } from '../../src/services/accounts/admin-bootstrap';
import { getTestDb, type TestDb } from './db';
import { onRunEnd } from './lifecycle';
import { assertResponseMatchesDocument } from './openapi-validator';

export const TEST_CONFIG: AppConfig = {
  JWT_SECRET: 'test-jwt-secret-0123456789abcdef0123456789',
  JWT_TTL: 3600,
  API_KEY_PEPPER: 'test-api-key-pepper-0123456789abcdef',
  RATE_LIMIT_RPS: 1000,
  RATE_LIMIT_BURST: 1000,
  // Every suite talks from 127.0.0.1 into one shared rate_limits table: per-address limits stay
  // out of the way unless a test lowers them (and then uses its own addresses, see TRUST_PROXY).
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

export const TEST_ADMIN = { email: 'admin@pixflow.test', password: 'admin-password-123' };

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  /** Serialised as JSON. */
  body?: unknown;
  /** Sent as-is with content-type application/json (for malformed or oversized bodies). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** The error body every failure has (docs/api.md "Errors"). */
export interface ErrorBody {
  message: string;
}

/** Response shapes of the account and operator endpoints, for tests to name what they expect. */
export interface LoginBody {
  token: string;
  user: { id: string; email: string; role: string };
}
export interface ApiKeyBody {
  id: string;
  name: string;
  description: string;
  value: string;
  status: string;
  createdAt: string;
  lastUsedAt?: string | null;
}
export interface CreatedMerchantBody {
  merchant: { id: string; [field: string]: unknown };
  user: { id: string; email: string; role: string };
}

export interface MerchantFixture {
  merchantId: string;
  userId: string;
  email: string;
  password: string;
  document: string;
  token: string;
}

export interface TestApi {
  baseUrl: string;
  /** The Koa app itself (its router lists every mounted route, for suites that enumerate them). */
  app: Koa<AppState>;
  knex: Knex;
  config: AppConfig;
  request<T = ErrorBody>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  /** Logs in as the bootstrap ADMIN and returns the JWT. */
  adminToken(): Promise<string>;
  /** Admin-creates a merchant with its USER and returns the user's JWT. */
  createMerchant(
    input?: Partial<{ name: string; email: string; password: string; feeBps: number }>,
  ): Promise<MerchantFixture>;
  /** Creates an API key with a merchant user's JWT; returns id and the one-time value. */
  createApiKey(token: string, name?: string): Promise<{ id: string; value: string }>;
  /** Approves KYC, configures the acquirer account and adds an ACTIVE PIX key (charge prerequisites). */
  makeReady(merchantId: string): Promise<void>;
  close(): Promise<void>;
}

/** A random valid CPF (11 digits with correct check digits, not all equal). */
export function randomCpf(): string {
  for (;;) {
    const base = Array.from({ length: 9 }, () => crypto.randomInt(10));
    const dv = (digits: number[]): number => {
      const sum = digits.reduce((s, d, i) => s + d * (digits.length + 1 - i), 0);
      const rest = sum % 11;
      return rest < 2 ? 0 : 11 - rest;
    };
    const d1 = dv(base);
    const d2 = dv([...base, d1]);
    const cpf = [...base, d1, d2].join('');
    if (!/^(\d)\1{10}$/.test(cpf)) return cpf;
  }
}

export const uniqueEmail = (label = 'user'): string => `${label}-${crypto.randomBytes(6).toString('hex')}@pixflow.test`;

export async function startApi(
  overrides: {
    config?: Partial<AppConfig>;
    deps?: Partial<AppDeps> & { onPixKeyCreated?: (pixKey: CreatedPixKey) => Promise<void> };
    /** The database to serve: the run's shared one unless told (test/support/db.ts `isolatedTestDb`). */
    db?: TestDb;
  } = {},
): Promise<TestApi> {
  const { knex } = overrides.db ?? (await getTestDb());
  const config: AppConfig = { ...TEST_CONFIG, ...overrides.config };
  await ensureAdmin(knex, { ADMIN_EMAIL: TEST_ADMIN.email, ADMIN_PASSWORD: TEST_ADMIN.password });

  const { onPixKeyCreated, ...deps } = overrides.deps ?? {};
  const logger =
    deps.logger ??
    createLogger({
      level: process.env.TEST_LOG_LEVEL === undefined ? 'silent' : (process.env.TEST_LOG_LEVEL as 'info'),
    });
  const app = createApp({
    config,
    knex,
    logger,
    checks: { temporal: async () => undefined },
    services: createAccountServices({ knex, config, logger, onPixKeyCreated }),
    ...deps,
  });
  // Koa's handler answers its own failures (ctx.onerror) and never rejects: no request is awaited.
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onRunEnd(close);

  async function request<T = ErrorBody>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    // Every answer of a documented operation must be what /openapi.json says (a drift fails the test).
    assertResponseMatchesDocument(method, path, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  let cachedAdminToken: string | undefined;
  async function adminToken(): Promise<string> {
    if (cachedAdminToken) return cachedAdminToken;
    const res = await request<LoginBody>('POST', '/v1/auth/login', { body: TEST_ADMIN });
    if (res.status !== 200) throw new Error(`admin login failed: ${res.status} ${JSON.stringify(res.body)}`);
    cachedAdminToken = res.body.token;
    return cachedAdminToken;
  }

  async function createMerchant(
    input: Partial<{ name: string; email: string; password: string; feeBps: number }> = {},
  ): Promise<MerchantFixture> {
    const email = input.email ?? uniqueEmail('merchant');
    const password = input.password ?? 'merchant-password-1';
    const document = randomCpf();
    const created = await request<CreatedMerchantBody>('POST', '/v1/admin/merchants', {
      token: await adminToken(),
      body: {
        name: input.name ?? 'Loja Teste',
        document,
        email,
        password,
        ...(input.feeBps === undefined ? {} : { feeBps: input.feeBps }),
      },
    });
    if (created.status !== 201)
      throw new Error(`create merchant failed: ${created.status} ${JSON.stringify(created.body)}`);
    const login = await request<LoginBody>('POST', '/v1/auth/login', { body: { email, password } });
    if (login.status !== 200) throw new Error(`merchant login failed: ${login.status}`);
    return {
      merchantId: created.body.merchant.id,
      userId: created.body.user.id,
      email,
      password,
      document,
      token: login.body.token,
    };
  }

  async function createApiKey(token: string, name = 'test key'): Promise<{ id: string; value: string }> {
    const res = await request<{ apiKey: ApiKeyBody }>('POST', '/v1/api-keys', { token, body: { name } });
    if (res.status !== 201) throw new Error(`create api key failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.apiKey.id, value: res.body.apiKey.value };
  }

  async function makeReady(merchantId: string): Promise<void> {
    const token = await adminToken();
    const patched = await request('PATCH', `/v1/admin/merchants/${merchantId}`, {
      token,
      body: { kycStatus: 'APPROVED', acquirerAccountId: `acct-${merchantId}` },
    });
    if (patched.status !== 200) throw new Error(`approve merchant failed: ${patched.status}`);
    const key = await request<{ pixKey: { id: string } }>('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, {
      token,
      body: { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
    });
    if (key.status !== 201) throw new Error(`add pix key failed: ${key.status} ${JSON.stringify(key.body)}`);
    const activated = await request('PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${key.body.pixKey.id}`, {
      token,
      body: { status: 'ACTIVE' },
    });
    if (activated.status !== 200) throw new Error(`activate pix key failed: ${activated.status}`);
  }

  return { baseUrl, app, knex, config, request, adminToken, createMerchant, createApiKey, makeReady, close };
}
