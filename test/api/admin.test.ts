import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  randomCpf,
  startApi,
  uniqueEmail,
  type ApiKeyBody,
  type CreatedMerchantBody,
  type ErrorBody,
  type LoginBody,
  type MerchantFixture,
  type TestApi,
} from '../support/api';

interface MerchantView {
  id: string;
  name: string;
  status: string;
  kycStatus: string;
  acquirerConfigured: boolean;
  acquirerAccountId?: string | null;
  pixKey: { id: string; type: string; key: string; status: string } | null;
  feeBps: number;
  feeFixed: number;
  settlementDelaySeconds: number;
  createdAt: string;
}
interface Balance {
  available: number;
  pending: number;
  blocked: number;
  total: number;
}
interface AuditEntry {
  action: string;
  targetId: string;
  actorEmail: string;
  details: Record<string, unknown>;
}

describe('API: operator (admin) endpoints', () => {
  let api: TestApi;
  let admin: string;
  let user: MerchantFixture;

  before(async () => {
    api = await startApi();
    admin = await api.adminToken();
    user = await api.createMerchant();
  });
  after(() => api?.close());

  it('walks the onboarding path: admin creates merchant → its user logs in → creates an API key → the key lists keys', async () => {
    const email = uniqueEmail('shop');
    const created = await api.request<CreatedMerchantBody>('POST', '/v1/admin/merchants', {
      token: admin,
      body: { name: 'Padaria Pão Quente', document: randomCpf(), email, password: 'padaria-secret-1', feeBps: 150 },
    });
    assert.equal(created.status, 201);
    const merchant = created.body.merchant as unknown as MerchantView;
    assert.equal(merchant.status, 'ACTIVE');
    assert.equal(merchant.kycStatus, 'PENDING');
    assert.equal(merchant.acquirerConfigured, false);
    assert.equal(merchant.feeBps, 150);
    assert.equal(merchant.feeFixed, api.config.DEFAULT_FEE_FIXED);
    assert.equal(merchant.settlementDelaySeconds, api.config.DEFAULT_SETTLEMENT_DELAY_SECONDS);
    assert.deepEqual(created.body.user, { id: created.body.user.id, email, role: 'USER' });

    const login = await api.request<LoginBody>('POST', '/v1/auth/login', {
      body: { email, password: 'padaria-secret-1' },
    });
    assert.equal(login.status, 200);
    const key = await api.createApiKey(login.body.token);
    const list = await api.request<{ apiKeys: ApiKeyBody[] }>('GET', '/v1/api-keys', { token: key.value });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.apiKeys.map((k) => k.id),
      [key.id],
    );

    const me = await api.request<{ merchant: MerchantView }>('GET', '/v1/merchants/me', { token: key.value });
    assert.equal(me.status, 200);
    assert.equal(me.body.merchant.id, merchant.id);
    assert.deepEqual(Object.keys(me.body.merchant).sort(), [
      'acquirerConfigured',
      'createdAt',
      'feeBps',
      'feeFixed',
      'id',
      'kycStatus',
      'name',
      'pixKey',
      'settlementDelaySeconds',
      'status',
    ]);
  });

  it('refuses a USER JWT and an API key on every admin route (403)', async () => {
    const key = await api.createApiKey(user.token);
    const routes: Array<[string, string, unknown?]> = [
      [
        'POST',
        '/v1/admin/merchants',
        { name: 'x', document: randomCpf(), email: uniqueEmail(), password: 'password-1' },
      ],
      ['GET', '/v1/admin/merchants'],
      ['PATCH', `/v1/admin/merchants/${user.merchantId}`, { kycStatus: 'APPROVED' }],
      [
        'POST',
        `/v1/admin/merchants/${user.merchantId}/pix-keys`,
        { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
      ],
      ['POST', `/v1/admin/merchants/${user.merchantId}/adjustments`, { amount: 100, reason: 'x' }],
      ['GET', '/v1/admin/audit-log'],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [user.token, key.value]) {
        const res = await api.request<ErrorBody>(method, path, { token, body });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(typeof res.body.message, 'string');
      }
    }
    const profile = await api.request<{ merchant: MerchantView }>('GET', '/v1/merchants/me', { token: user.token });
    assert.equal(profile.body.merchant.kycStatus, 'PENDING', 'nothing changed');
  });

  it('validates merchant creation (document check digits, e-mail, password length) and refuses duplicates', async () => {
    const base = { name: 'Loja', document: randomCpf(), email: uniqueEmail(), password: 'password-1' };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...base, document: '12345678900' }, /document/],
      [{ ...base, email: 'not-an-email' }, /email/],
      [{ ...base, password: 'short' }, /password/],
      [{ ...base, feeBps: 10_001 }, /feeBps/],
      [{ ...base, feeBps: '100' }, /feeBps/],
      [{ ...base, name: undefined }, /name/],
    ];
    for (const [body, field] of cases) {
      const res = await api.request<ErrorBody>('POST', '/v1/admin/merchants', { token: admin, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.message, field);
    }
    const dupEmail = await api.request('POST', '/v1/admin/merchants', {
      token: admin,
      body: { ...base, email: user.email },
    });
    assert.equal(dupEmail.status, 409);
    const dupDocument = await api.request('POST', '/v1/admin/merchants', {
      token: admin,
      body: { ...base, document: user.document },
    });
    assert.equal(dupDocument.status, 409);
  });

  it('updates KYC, status, acquirer account and fees; unknown id → 404', async () => {
    const res = await api.request<{ merchant: MerchantView }>('PATCH', `/v1/admin/merchants/${user.merchantId}`, {
      token: admin,
      body: {
        kycStatus: 'APPROVED',
        acquirerAccountId: 'acct-123',
        feeBps: 250,
        feeFixed: 10,
        settlementDelaySeconds: 0,
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.merchant.kycStatus, 'APPROVED');
    assert.equal(res.body.merchant.acquirerConfigured, true);
    assert.equal(res.body.merchant.acquirerAccountId, 'acct-123');
    assert.equal(res.body.merchant.feeBps, 250);
    assert.equal(res.body.merchant.feeFixed, 10);
    assert.equal(res.body.merchant.settlementDelaySeconds, 0);

    const bad = await api.request<ErrorBody>('PATCH', `/v1/admin/merchants/${user.merchantId}`, {
      token: admin,
      body: { kycStatus: 'MAYBE' },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /kycStatus/);
    const missing = await api.request('PATCH', '/v1/admin/merchants/mch_doesnotexist', {
      token: admin,
      body: { status: 'SUSPENDED' },
    });
    assert.equal(missing.status, 404);
  });

  it('adds PIX keys as PENDING with format checks, activates them, and the profile shows the active key', async () => {
    const m = await api.createMerchant();
    const invalid: Array<[string, string]> = [
      ['CPF', '12345678900'],
      ['CNPJ', '11111111111111'],
      ['EMAIL', `${'a'.repeat(70)}@example.com`],
      ['PHONE', '11987654321'],
      ['CHAVE_ALEATORIA', 'not-a-uuid'],
      ['IBAN', 'x'],
    ];
    for (const [type, key] of invalid) {
      const res = await api.request<ErrorBody>('POST', `/v1/admin/merchants/${m.merchantId}/pix-keys`, {
        token: admin,
        body: { type, key },
      });
      assert.equal(res.status, 400, `${type} ${key}`);
      assert.ok(res.body.message);
    }

    const uuid = crypto.randomUUID();
    const created = await api.request<{ pixKey: { id: string; type: string; key: string; status: string } }>(
      'POST',
      `/v1/admin/merchants/${m.merchantId}/pix-keys`,
      { token: admin, body: { type: 'CHAVE_ALEATORIA', key: uuid } },
    );
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.pixKey, {
      id: created.body.pixKey.id,
      type: 'CHAVE_ALEATORIA',
      key: uuid,
      status: 'PENDING',
    });

    const dup = await api.request('POST', `/v1/admin/merchants/${m.merchantId}/pix-keys`, {
      token: admin,
      body: { type: 'CHAVE_ALEATORIA', key: uuid },
    });
    assert.equal(dup.status, 409);

    const activated = await api.request<{ pixKey: { status: string } }>(
      'PATCH',
      `/v1/admin/merchants/${m.merchantId}/pix-keys/${created.body.pixKey.id}`,
      { token: admin, body: { status: 'ACTIVE' } },
    );
    assert.equal(activated.status, 200);
    assert.equal(activated.body.pixKey.status, 'ACTIVE');

    // The key belongs to m: addressing it under another merchant is 404.
    const wrongOwner = await api.request(
      'PATCH',
      `/v1/admin/merchants/${user.merchantId}/pix-keys/${created.body.pixKey.id}`,
      {
        token: admin,
        body: { status: 'INACTIVE' },
      },
    );
    assert.equal(wrongOwner.status, 404);

    const me = await api.request<{ merchant: MerchantView }>('GET', '/v1/merchants/me', { token: m.token });
    assert.deepEqual(me.body.merchant.pixKey, {
      id: created.body.pixKey.id,
      type: 'CHAVE_ALEATORIA',
      key: uuid,
      status: 'ACTIVE',
    });

    // A newer key still PENDING: the profile keeps showing the active one. The profile is one
    // statement (docs/performance.md "Where a read's time goes"); its body is, byte for byte, the operator's view
    // of the same merchant without the operator-only fields.
    const newer = await api.request('POST', `/v1/admin/merchants/${m.merchantId}/pix-keys`, {
      token: admin,
      body: { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
    });
    assert.equal(newer.status, 201);
    const again = await api.request<{ merchant: MerchantView }>('GET', '/v1/merchants/me', { token: m.token });
    assert.equal(again.body.merchant.pixKey?.id, created.body.pixKey.id);
    const operatorView = await api.request<{ merchant: Record<string, unknown> }>(
      'GET',
      `/v1/admin/merchants/${m.merchantId}`,
      { token: admin },
    );
    const operatorOnly = new Set(['document', 'email', 'acquirerAccountId', 'pixKeys', 'updatedAt']);
    const profilePart = Object.fromEntries(
      Object.entries(operatorView.body.merchant).filter(([k]) => !operatorOnly.has(k)),
    );
    assert.equal(JSON.stringify(again.body.merchant), JSON.stringify(profilePart));

    const missingMerchant = await api.request('POST', '/v1/admin/merchants/mch_nope/pix-keys', {
      token: admin,
      body: { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
    });
    assert.equal(missingMerchant.status, 404);
  });

  it('calls onPixKeyCreated after a key is created', async () => {
    const seen: string[] = [];
    const hooked = await startApi({ deps: { onPixKeyCreated: async (k) => void seen.push(k.id) } });
    try {
      const m = await hooked.createMerchant();
      const res = await hooked.request<{ pixKey: { id: string } }>(
        'POST',
        `/v1/admin/merchants/${m.merchantId}/pix-keys`,
        {
          token: await hooked.adminToken(),
          body: { type: 'EMAIL', key: uniqueEmail('pix') },
        },
      );
      assert.equal(res.status, 201);
      assert.deepEqual(seen, [res.body.pixKey.id]);
    } finally {
      await hooked.close();
    }
  });

  it('adjusts the available balance (credit and debit, never below zero) and the merchant sees it', async () => {
    const m = await api.createMerchant();
    const zero = await api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: m.token });
    assert.equal(zero.status, 200);
    assert.deepEqual(zero.body.balance, { available: 0, pending: 0, blocked: 0, total: 0 });

    const credit = await api.request('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
      token: admin,
      body: { amount: 5000, reason: 'promotional credit' },
    });
    assert.equal(credit.status, 201);
    const debit = await api.request('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
      token: admin,
      body: { amount: -1500, reason: 'chargeback fee' },
    });
    assert.equal(debit.status, 201);
    const tooMuch = await api.request<ErrorBody>('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
      token: admin,
      body: { amount: -999_999, reason: 'too much' },
    });
    assert.equal(tooMuch.status, 400);

    const after = await api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: m.token });
    assert.deepEqual(after.body.balance, { available: 3500, pending: 0, blocked: 0, total: 3500 });

    for (const body of [
      { amount: '100', reason: 'x' },
      { amount: 100.5, reason: 'x' },
      { amount: 0, reason: 'x' },
      { amount: 100 },
    ]) {
      const res = await api.request<ErrorBody>('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
        token: admin,
        body,
      });
      assert.equal(res.status, 400, JSON.stringify(body));
    }
  });

  it('answers concurrent balance reads of many merchants, each with its own balance (one statement per turn)', async () => {
    const merchants = await Promise.all([1, 2, 3, 4, 5].map(() => api.createMerchant()));
    await Promise.all(
      merchants.map((m, i) =>
        api.request('POST', `/v1/admin/merchants/${m.merchantId}/adjustments`, {
          token: admin,
          body: { amount: 1000 * (i + 1), reason: 'seed' },
        }),
      ),
    );
    // Interleaved, so that reads of different merchants share turns (and statements).
    const reads = await Promise.all(
      Array.from({ length: 60 }, (_, n) => {
        const i = n % merchants.length;
        return api
          .request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: merchants[i]!.token })
          .then((r) => ({ i, r }));
      }),
    );
    for (const { i, r } of reads) {
      assert.equal(r.status, 200);
      const cents = 1000 * (i + 1);
      assert.deepEqual(r.body.balance, { available: cents, pending: 0, blocked: 0, total: cents }, `merchant ${i}`);
    }
    // A read asked for after a write has committed sees it, also while other reads are in flight.
    const [, , credited] = await Promise.all([
      api.request('GET', '/v1/merchants/me/balance', { token: merchants[1]!.token }),
      api.request('POST', `/v1/admin/merchants/${merchants[0]!.merchantId}/adjustments`, {
        token: admin,
        body: { amount: 7, reason: 'late' },
      }),
      api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', { token: merchants[2]!.token }),
    ]);
    assert.equal(credited.body.balance.available, 3000);
    const after = await api.request<{ balance: Balance }>('GET', '/v1/merchants/me/balance', {
      token: merchants[0]!.token,
    });
    assert.equal(after.body.balance.available, 1007);
  });

  it('lists merchants and writes an audit row for every operator action', async () => {
    const m = await api.createMerchant();
    await api.request('PATCH', `/v1/admin/merchants/${m.merchantId}`, { token: admin, body: { status: 'SUSPENDED' } });

    const list = await api.request<{ page: number; limit: number; total: number; merchants: MerchantView[] }>(
      'GET',
      '/v1/admin/merchants?limit=100',
      { token: admin },
    );
    assert.equal(list.status, 200);
    assert.equal(list.body.limit, 100);
    assert.ok(list.body.total >= 2);
    assert.equal(list.body.merchants[0]?.id, m.merchantId, 'newest first');
    assert.equal(list.body.merchants[0]?.status, 'SUSPENDED');

    const audit = await api.request<{ entries: AuditEntry[] }>('GET', `/v1/admin/audit-log?targetId=${m.merchantId}`, {
      token: admin,
    });
    assert.equal(audit.status, 200);
    assert.deepEqual(
      audit.body.entries.map((e) => e.action),
      ['merchant.update', 'merchant.create'],
    );
    assert.ok(audit.body.entries.every((e) => e.actorEmail === 'admin@pixflow.test'));
    assert.ok(!JSON.stringify(audit.body).includes(m.password), 'no password in the audit log');

    const badQuery = await api.request<ErrorBody>('GET', '/v1/admin/merchants?limit=1000', { token: admin });
    assert.equal(badQuery.status, 400);
    assert.match(badQuery.body.message, /limit/);
  });

  it('answers merchant routes for an operator (no merchant) with 404', async () => {
    const res = await api.request<ErrorBody>('GET', '/v1/merchants/me', { token: admin });
    assert.equal(res.status, 404);
  });
});
