import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { newId } from '../../src/lib/ids';
import { moveBlocked } from '../../src/services/ledger/ledger';
import { createMerchantFixture, fundMerchant, getTestDb } from '../support/db';
import { runOps, type CliResult } from '../support/ops-cli';
import { randomCpf, startApi, uniqueEmail, type LoginBody, type TestApi } from '../support/api';

describe('ops CLI (npm run ops)', function () {
  // Each command is a fresh tsx process: allow for its start-up on a busy machine.
  this.timeout(120_000);
  let api: TestApi;
  let databaseUrl: string;

  before(async () => {
    databaseUrl = (await getTestDb()).url;
    api = await startApi();
  });
  after(() => api?.close());

  const ops = (...args: string[]): Promise<CliResult> => runOps(databaseUrl, ...args);

  it('creates a merchant whose user can log in, configures it, adds and activates a PIX key, adjusts, and audits as "cli"', async () => {
    const email = uniqueEmail('cli');
    const created = await ops(
      'merchants',
      'create',
      '--name',
      'Loja CLI',
      '--document',
      randomCpf(),
      '--email',
      email,
      '--password',
      'cli-password-1',
    );
    assert.equal(created.code, 0, created.stderr);
    const { merchant } = JSON.parse(created.stdout) as { merchant: { id: string; kycStatus: string } };
    assert.equal(merchant.kycStatus, 'PENDING');

    const login = await api.request<LoginBody>('POST', '/v1/auth/login', {
      body: { email, password: 'cli-password-1' },
    });
    assert.equal(login.status, 200);

    const updated = await ops(
      'merchants',
      'update',
      merchant.id,
      '--kyc-status',
      'APPROVED',
      '--acquirer-account-id',
      'acct-cli',
      '--fee-bps',
      '120',
    );
    assert.equal(updated.code, 0, updated.stderr);
    const u = JSON.parse(updated.stdout) as {
      merchant: { kycStatus: string; acquirerConfigured: boolean; feeBps: number };
    };
    assert.deepEqual([u.merchant.kycStatus, u.merchant.acquirerConfigured, u.merchant.feeBps], ['APPROVED', true, 120]);

    const added = await ops('pix-key', 'add', merchant.id, '--type', 'CHAVE_ALEATORIA', '--key', crypto.randomUUID());
    assert.equal(added.code, 0, added.stderr);
    const { pixKey } = JSON.parse(added.stdout) as { pixKey: { id: string; status: string } };
    assert.equal(pixKey.status, 'PENDING');
    const activated = await ops('pix-key', 'activate', merchant.id, pixKey.id);
    assert.equal(activated.code, 0, activated.stderr);
    assert.equal((JSON.parse(activated.stdout) as { pixKey: { status: string } }).pixKey.status, 'ACTIVE');

    const adjusted = await ops('adjust', merchant.id, '--amount', '2500', '--reason', 'welcome credit');
    assert.equal(adjusted.code, 0, adjusted.stderr);
    assert.equal((JSON.parse(adjusted.stdout) as { balance: { available: number } }).balance.available, 2500);

    const listed = await ops('merchants', 'list', '--limit', '100');
    assert.equal(listed.code, 0, listed.stderr);
    const list = JSON.parse(listed.stdout) as { merchants: Array<{ id: string }> };
    assert.ok(list.merchants.some((m) => m.id === merchant.id));

    const audit = await ops('audit-log', '--target-id', merchant.id);
    assert.equal(audit.code, 0, audit.stderr);
    const entries = (JSON.parse(audit.stdout) as { entries: Array<{ action: string; actorEmail: string }> }).entries;
    assert.deepEqual(entries.map((e) => e.action).sort(), [
      'balance.adjust',
      'merchant.create',
      'merchant.update',
      'pix_key.create',
      'pix_key.update',
    ]);
    assert.ok(entries.every((e) => e.actorEmail === 'cli'));
  });

  it('reports invalid input as {message} on stderr with exit code 1', async () => {
    const bad = await ops('pix-key', 'add', 'mch_whatever', '--type', 'PHONE', '--key', '11987654321');
    assert.equal(bad.code, 1);
    assert.match((JSON.parse(bad.stderr.trim().split('\n').pop() ?? '{}') as { message: string }).message, /E\.164/);
    const fraction = await ops('adjust', 'mch_whatever', '--amount', '10.5', '--reason', 'x');
    assert.notEqual(fraction.code, 0);
    const unknown = await ops('merchants', 'get', 'mch_nope');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Merchant not found/);
  });

  it('ledger check: prints the report as JSON, exit 0 for whole books and 1 for broken ones', async () => {
    const { knex } = await getTestDb();
    const m = await createMerchantFixture(knex);
    await fundMerchant(knex, m.id, 2_500);
    const whole = await ops('ledger', 'check', '--merchant-id', m.id);
    assert.equal(whole.code, 0, whole.stderr);
    const report = JSON.parse(whole.stdout) as { ok: boolean; merchantIds: string[]; violations: unknown[] };
    assert.deepEqual([report.ok, report.merchantIds, report.violations], [true, [m.id], []]);
    // Each check announced on stderr as it begins; stdout holds the report alone.
    assert.match(whole.stderr, /^\[ops \+\d+\.\ds\] ledger check: balanced transactions$/m);
    assert.match(whole.stderr, /^\[ops \+\d+\.\ds\] ledger check: blocked funds$/m);

    // Broken books the database accepts (it refuses a balance that disagrees with its postings):
    // money blocked that no infraction explains.
    const stray = `test:${newId('blk')}`;
    await moveBlocked(knex, { reference: `${stray}:block`, merchantId: m.id, amount: 100, direction: 'block' });
    try {
      const broken = await ops('ledger', 'check', '--merchant-id', m.id);
      assert.equal(broken.code, 1);
      const bad = JSON.parse(broken.stdout) as { ok: boolean; violations: Array<{ check: string }> };
      assert.equal(bad.ok, false);
      assert.deepEqual(
        bad.violations.map((v) => v.check),
        ['blocked_mismatch'],
      );
    } finally {
      // Repaired: the run-wide check after the last suite must find these books whole.
      await moveBlocked(knex, { reference: `${stray}:unblock`, merchantId: m.id, amount: 100, direction: 'unblock' });
    }
  });
});
