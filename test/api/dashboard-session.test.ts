/**
 * The dashboard's session over real HTTP (docs/dashboard.md "How the session is kept safe"): the
 * cookie's flags, the CSP, the CSRF token and Origin check on state-changing calls, the operator
 * refused, the login limits shared with POST /v1/auth/login, and /v1 never reading the cookie.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { startApi, TEST_ADMIN, uniqueEmail, type MerchantFixture, type TestApi } from '../support/api';
import { buildDashboard, BUILD_DIR, dashboardBuilt } from '../../tools/dashboard/src/build';
import { CONTENT_SECURITY_POLICY } from '../../src/http/dashboard/security';

interface SessionBody {
  user?: { id: string; role: string };
  csrfToken?: string;
  sandbox?: boolean;
  message?: string;
}

describe('dashboard session and its door to the API', function () {
  this.timeout(60_000);
  let api: TestApi;
  let m: MerchantFixture;

  before(async () => {
    if (!dashboardBuilt()) await buildDashboard();
    api = await startApi();
    m = await api.createMerchant();
  });
  after(() => api?.close());

  const origin = () => api.baseUrl;
  async function signIn(email: string, password: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${api.baseUrl}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: origin(), ...headers },
      body: JSON.stringify({ email, password }),
    });
    return { res, body: (await res.json()) as SessionBody };
  }
  async function session(): Promise<{ cookie: string; csrf: string }> {
    const { res, body } = await signIn(m.email, m.password);
    assert.equal(res.status, 200, JSON.stringify(body));
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    return { cookie, csrf: body.csrfToken as string };
  }
  const call = (method: string, p: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${api.baseUrl}${p}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('serves the built page with a strict CSP and no third-party reference', async () => {
    const res = await fetch(`${api.baseUrl}/dashboard`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.equal(csp, CONTENT_SECURITY_POLICY);
    for (const directive of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"])
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    assert.ok(!/unsafe-inline|unsafe-eval|https?:/.test(csp), csp);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.ok(!/https?:\/\//.test(html), 'no absolute URL in the page');
    const js = await fetch(`${api.baseUrl}/dashboard/assets/app.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.ok(js.headers.get('content-security-policy'));
  });

  it('sends the JavaScript gzip-compressed (under 300 KB) to a browser that accepts it, else as is', async () => {
    const file = fs.readFileSync(path.join(BUILD_DIR, 'app.js'));
    const get = (headers: Record<string, string>) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(`${api.baseUrl}/dashboard/assets/app.js`, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    const gz = await get({ 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(String(gz.headers.vary), /Accept-Encoding/i);
    assert.equal(Number(gz.headers['content-length']), gz.body.length);
    assert.ok(gz.body.length < 300 * 1024, `${gz.body.length} bytes gzip`);
    assert.ok(zlib.gunzipSync(gz.body).equals(file), 'the gzip form is the file');
    const plain = await get({ 'accept-encoding': 'identity' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.body.equals(file));
  });

  it('signs a merchant user in with an HttpOnly, SameSite=Strict cookie scoped to /dashboard (no Secure in development)', async () => {
    const { res, body } = await signIn(m.email, m.password);
    assert.equal(res.status, 200);
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^pixflow_dashboard=[\w.-]+; /);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Path=\/dashboard/);
    assert.match(cookie, new RegExp(`; Max-Age=${api.config.JWT_TTL}`));
    assert.doesNotMatch(cookie, /Secure/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(body.user?.role, 'USER');
    assert.equal(typeof body.csrfToken, 'string');
    assert.ok(
      !JSON.stringify(body).includes(cookie.split(';')[0]?.split('=')[1] ?? '-'),
      'the token is not in the body',
    );
    assert.equal(body.sandbox, false, 'no sandbox routes are mounted here');
  });

  it('marks the cookie Secure in production', async () => {
    const prod = await startApi({ config: { NODE_ENV: 'production' } });
    try {
      const res = await fetch(`${prod.baseUrl}/dashboard/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: prod.baseUrl },
        body: JSON.stringify({ email: m.email, password: m.password }),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('set-cookie') ?? '', /; Secure/);
    } finally {
      await prod.close();
    }
  });

  it("refuses an operator's correct login with 403 and no cookie", async () => {
    const { res, body } = await signIn(TEST_ADMIN.email, TEST_ADMIN.password);
    assert.equal(res.status, 403);
    assert.match(body.message ?? '', /Operators \(ADMIN\) cannot sign in to the dashboard/);
    assert.equal(res.headers.get('set-cookie'), null);
  });

  it('answers a wrong password as the API does, and shares its per-account limit', async () => {
    const victim = await api.createMerchant({ email: uniqueEmail('dash-limit') });
    const wrong = await signIn(victim.email, 'not-the-password');
    assert.equal(wrong.res.status, 401);
    assert.equal(wrong.body.message, 'Invalid e-mail or password');
    for (let i = 1; i < api.config.LOGIN_MAX_FAILURES_PER_ACCOUNT; i++) await signIn(victim.email, 'still-wrong');
    const limited = await signIn(victim.email, victim.password);
    assert.equal(limited.res.status, 429);
    assert.ok(limited.res.headers.get('retry-after'));
    // One counter: the API's own login is refused as well.
    const viaApi = await call('POST', '/v1/auth/login', {}, { email: victim.email, password: victim.password });
    assert.equal(viaApi.status, 429);
  });

  it('refuses a login posted from another site', async () => {
    const { res } = await signIn(m.email, m.password, { origin: 'https://evil.example' });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('set-cookie'), null);
  });

  it('reads with the cookie alone, and knows the session (GET /dashboard/session)', async () => {
    const { cookie, csrf } = await session();
    const me = await call('GET', '/dashboard/api/v1/merchants/me', { cookie });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { merchant: { id: string } }).merchant.id, m.merchantId);
    assert.equal(me.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    assert.equal(me.headers.get('cache-control'), 'no-store');
    const s = await call('GET', '/dashboard/session', { cookie });
    assert.equal(s.status, 200);
    assert.equal(((await s.json()) as SessionBody).csrfToken, csrf);
    assert.equal((await call('GET', '/dashboard/session', {})).status, 401);
    assert.equal((await call('GET', '/dashboard/api/v1/merchants/me', {})).status, 401);
  });

  it('refuses a cross-site POST: no CSRF token, a wrong one, or a foreign Origin', async () => {
    const { cookie, csrf } = await session();
    const body = { name: 'from the dashboard' };
    const before = await api.knex('api_keys').where({ merchant_id: m.merchantId }).count<{ n: string }[]>({ n: '*' });
    const noToken = await call('POST', '/dashboard/api/v1/api-keys', { cookie }, body);
    assert.equal(noToken.status, 403);
    assert.match(((await noToken.json()) as SessionBody).message ?? '', /CSRF token/);
    const wrongToken = await call('POST', '/dashboard/api/v1/api-keys', { cookie, 'x-csrf-token': `${csrf}x` }, body);
    assert.equal(wrongToken.status, 403);
    const foreign = await call(
      'POST',
      '/dashboard/api/v1/api-keys',
      { cookie, 'x-csrf-token': csrf, origin: 'https://evil.example' },
      body,
    );
    assert.equal(foreign.status, 403);
    assert.match(((await foreign.json()) as SessionBody).message ?? '', /Cross-site request refused/);
    const crossSite = await call(
      'POST',
      '/dashboard/api/v1/api-keys',
      { cookie, 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' },
      body,
    );
    assert.equal(crossSite.status, 403);
    const after = await api.knex('api_keys').where({ merchant_id: m.merchantId }).count<{ n: string }[]>({ n: '*' });
    assert.deepEqual(after, before, 'nothing was created');
    const ok = await call(
      'POST',
      '/dashboard/api/v1/api-keys',
      { cookie, 'x-csrf-token': csrf, origin: origin() },
      body,
    );
    assert.equal(ok.status, 201);
  });

  it('keeps /v1 deaf to the cookie and the door shut on operator and login routes', async () => {
    const { cookie, csrf } = await session();
    assert.equal((await call('GET', '/v1/merchants/me', { cookie })).status, 401);
    for (const p of ['/dashboard/api/v1/admin/merchants', '/dashboard/api/v1/auth/login', '/dashboard/api/healthz'])
      assert.equal((await call('GET', p, { cookie })).status, 404, p);
    const traversal = await call('GET', '/dashboard/api/v1/charges/../admin/merchants', { cookie });
    assert.equal(traversal.status, 404);
    // A Bearer header sent to the door is replaced by the session's own token.
    const other = await api.createMerchant();
    const res = await call('GET', '/dashboard/api/v1/merchants/me', { cookie, authorization: `Bearer ${other.token}` });
    assert.equal(((await res.json()) as { merchant: { id: string } }).merchant.id, m.merchantId);
    // And a bad input through the door is the API's own 400 with its message.
    const bad = await call(
      'POST',
      '/dashboard/api/v1/api-keys',
      { cookie, 'x-csrf-token': csrf, origin: origin() },
      {},
    );
    assert.equal(bad.status, 400);
    assert.equal(typeof ((await bad.json()) as SessionBody).message, 'string');
  });

  it('signs out: the cookie is cleared, with the CSRF token', async () => {
    const { cookie, csrf } = await session();
    const refused = await call('DELETE', '/dashboard/session', { cookie });
    assert.equal(refused.status, 403);
    const out = await call('DELETE', '/dashboard/session', { cookie, 'x-csrf-token': csrf });
    assert.equal(out.status, 204);
    assert.match(
      out.headers.get('set-cookie') ?? '',
      /^pixflow_dashboard=; Path=\/dashboard; Max-Age=0; HttpOnly; SameSite=Strict/,
    );
  });
});
