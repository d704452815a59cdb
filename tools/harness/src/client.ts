/**
 * A small HTTP client for the reliability suites: talks to any API process of a stack by base URL
 * (the processes share one database, so a merchant made through one is seen by all).
 */
import crypto from 'node:crypto';
import { randomCpf, uniqueEmail } from '../../../test/support/api';
import { STACK_ADMIN } from './stack';

export interface Res<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the caller sees the text
  }
  return { status: res.status, headers: res.headers, body: body as T, text };
}

function expectStatus(res: Res<unknown>, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
}

export async function login(base: string, email: string, password: string): Promise<string> {
  const res = await call<{ token: string }>(base, 'POST', '/v1/auth/login', { body: { email, password } });
  expectStatus(res, 200, `login ${email}`);
  return res.body.token;
}

export interface ReadyMerchant {
  merchantId: string;
  token: string;
  apiKey: string;
}

/** A merchant with KYC approved, acquirer account, an ACTIVE PIX key, an API key and optional funds. */
export async function readyMerchant(
  base: string,
  opts: { fund?: number; settlementDelaySeconds?: number } = {},
): Promise<ReadyMerchant> {
  const admin = await login(base, STACK_ADMIN.email, STACK_ADMIN.password);
  const email = uniqueEmail('reliability');
  const password = 'merchant-password-1';
  const created = await call<{ merchant: { id: string } }>(base, 'POST', '/v1/admin/merchants', {
    token: admin,
    body: {
      name: 'Loja Confiável',
      document: randomCpf(),
      email,
      password,
      settlementDelaySeconds: opts.settlementDelaySeconds ?? 0,
    },
  });
  expectStatus(created, 201, 'create merchant');
  const merchantId = created.body.merchant.id;
  expectStatus(
    await call(base, 'PATCH', `/v1/admin/merchants/${merchantId}`, {
      token: admin,
      body: { kycStatus: 'APPROVED', acquirerAccountId: `acct-${merchantId}` },
    }),
    200,
    'approve merchant',
  );
  const key = await call<{ pixKey: { id: string } }>(base, 'POST', `/v1/admin/merchants/${merchantId}/pix-keys`, {
    token: admin,
    body: { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
  });
  expectStatus(key, 201, 'add pix key');
  expectStatus(
    await call(base, 'PATCH', `/v1/admin/merchants/${merchantId}/pix-keys/${key.body.pixKey.id}`, {
      token: admin,
      body: { status: 'ACTIVE' },
    }),
    200,
    'activate pix key',
  );
  if (opts.fund) {
    expectStatus(
      await call(base, 'POST', `/v1/admin/merchants/${merchantId}/adjustments`, {
        token: admin,
        body: { amount: opts.fund, reason: 'reliability funding' },
      }),
      201,
      'fund merchant',
    );
  }
  const token = await login(base, email, password);
  const apiKey = await call<{ apiKey: { value: string } }>(base, 'POST', '/v1/api-keys', {
    token,
    body: { name: 'reliability' },
  });
  expectStatus(apiKey, 201, 'create api key');
  return { merchantId, token, apiKey: apiKey.body.apiKey.value };
}

/** Registers a webhook for `events` at `url`; returns its id and secret. */
export async function registerWebhook(
  base: string,
  token: string,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string }> {
  const res = await call<{ webhook: { id: string; secret: string } }>(base, 'POST', '/v1/webhooks/merchant', {
    token,
    body: { url, events },
  });
  expectStatus(res, 201, 'register webhook');
  return { id: res.body.webhook.id, secret: res.body.webhook.secret };
}

export const withdrawalBody = (amount: number): Record<string, unknown> => ({
  amount,
  pixKeyType: 'CHAVE_ALEATORIA',
  pixKey: crypto.randomUUID(),
  description: 'reliability',
});
