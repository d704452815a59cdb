/**
 * PIX keys at the acquirer: the admin API registers a new key through `pixkey-<id>`, the simulator
 * activates it on its own and says so by signed callback, and every status change — from the
 * acquirer or an operator — records `pixkey.updated`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../src/lib/logger';
import { newId } from '../../src/lib/ids';
import { reconcilePixKeyRegistrations } from '../../src/services/pix-keys/reconciler';
import { pixKeyWorkflowId } from '../../src/temporal/workflow-ids';
import { medStack, pixKeyFlows, type MedStack } from '../support/med';
import { getTestDb } from '../support/db';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

interface PixKeyBody {
  pixKey: { id: string; type: string; key: string; status: string };
}

describe('PIX key registration and activation', function () {
  this.timeout(120_000);
  let s: MedStack;

  before(async () => {
    s = await medStack();
  });
  afterEach(() => s.simulator.control.setFaults({}));

  const { keyRow, untilKey, keyEvents } = pixKeyFlows(() => s);

  async function addKey(merchantId: string, key = crypto.randomUUID()): Promise<PixKeyBody['pixKey']> {
    const res = await s.api.request<PixKeyBody>('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, {
      token: await s.api.adminToken(),
      body: { type: 'CHAVE_ALEATORIA', key },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.pixKey.status, 'PENDING');
    return res.body.pixKey;
  }

  it('a new key becomes ACTIVE through the simulator callback, with pixkey.updated', async () => {
    const m = await s.api.createMerchant();
    const key = await addKey(m.merchantId);
    const row = await untilKey(key.id, 'ACTIVE');
    // Registered at the acquirer under our key id (its idempotency key), and activated there.
    const atSim = s.simulator.control.getKey(row.acquirer_key_id);
    assert.equal(atSim?.idempotencyKey, key.id);
    assert.equal(atSim?.status, 'ATIVA');
    assert.equal(await s.client.workflow.getHandle(pixKeyWorkflowId(key.id)).result(), 'registered');
    assert.deepEqual(await keyEvents(key.id), [
      { keyId: key.id, key: key.key, type: 'CHAVE_ALEATORIA', status: 'ATIVA' },
    ]);
    const me = await s.api.request<{ merchant: { pixKey: { status: string } } }>('GET', '/v1/merchants/me', {
      token: m.token,
    });
    assert.equal(me.body.merchant.pixKey.status, 'ACTIVE');
  });

  it('an acquirer hiccup only delays the registration: retried until the key is ACTIVE', async () => {
    const m = await s.api.createMerchant();
    s.simulator.control.setFaults({ failNext: { route: 'registerKey', times: 2, status: 503 } });
    const key = await addKey(m.merchantId);
    assert.equal(await s.client.workflow.getHandle(pixKeyWorkflowId(key.id)).result(), 'registered');
    await untilKey(key.id, 'ACTIVE');
    const calls = s.simulator.control.calls.filter((c) => c.route === 'registerKey' && c.status === 503);
    assert.ok(calls.length >= 2);
    assert.equal((await keyEvents(key.id)).length, 1);
  });

  it('a key the acquirer refuses becomes INACTIVE with pixkey.updated (INATIVA)', async () => {
    const m = await s.api.createMerchant();
    s.simulator.control.setFaults({ failNext: { route: 'registerKey', times: 1, status: 422 } });
    const key = await addKey(m.merchantId);
    assert.equal(await s.client.workflow.getHandle(pixKeyWorkflowId(key.id)).result(), 'refused');
    await untilKey(key.id, 'INACTIVE');
    assert.deepEqual(await keyEvents(key.id), [
      { keyId: key.id, key: key.key, type: 'CHAVE_ALEATORIA', status: 'INATIVA' },
    ]);
  });

  it('operator and acquirer changes each record pixkey.updated; a late ATIVA never revives an INACTIVE key', async () => {
    const m = await s.api.createMerchant();
    const key = await addKey(m.merchantId);
    const row = await untilKey(key.id, 'ACTIVE');
    const token = await s.api.adminToken();

    // Operator: ACTIVE → INACTIVE → ACTIVE, and a PATCH to the same status changes nothing.
    for (const status of ['INACTIVE', 'ACTIVE', 'ACTIVE']) {
      const res = await s.api.request<PixKeyBody>('PATCH', `/v1/admin/merchants/${m.merchantId}/pix-keys/${key.id}`, {
        token,
        body: { status },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.pixKey.status, status);
    }
    // Acquirer: INATIVA deactivates; a later ATIVA (out of order, or the acquirer's word against an
    // operator's INACTIVE) is ignored.
    s.simulator.control.setKeyStatus(row.acquirer_key_id, 'INATIVA');
    await untilKey(key.id, 'INACTIVE');
    s.simulator.control.setKeyStatus(row.acquirer_key_id, 'ATIVA');
    await s.simulator.control.callbacks.idle();
    assert.equal((await keyRow(key.id)).status, 'INACTIVE');

    const statuses = (await keyEvents(key.id)).map((d) => d.status);
    assert.deepEqual(statuses, ['ATIVA', 'INATIVA', 'ATIVA', 'INATIVA']);
  });

  it('the ops CLI starts the registration itself when Temporal is configured', async () => {
    const m = await s.api.createMerchant();
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'src/cli/ops.ts'),
        'pix-key',
        'add',
        m.merchantId,
        '--type',
        'CHAVE_ALEATORIA',
        '--key',
        crypto.randomUUID(),
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: (await getTestDb()).url,
          TEMPORAL_ADDRESS: s.env.address,
          TEMPORAL_TASK_QUEUE: s.taskQueue,
          TEMPORAL_SEARCH_ATTRIBUTES: 'false',
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          ADMIN_EMAIL: '',
          ADMIN_PASSWORD: '',
          DATA_DIR: path.join(os.tmpdir(), 'pixflow-ops-cli-test'),
        },
      },
    );
    const out = JSON.parse(stdout) as { pixKey: { id: string; status: string }; registration: string };
    assert.equal(out.pixKey.status, 'PENDING');
    assert.equal(out.registration, 'started');
    await untilKey(out.pixKey.id, 'ACTIVE');
  });

  it('the reconciler registers a key added without the hook (the ops CLI), which then becomes ACTIVE', async () => {
    const m = await s.api.createMerchant();
    const id = newId('pxk');
    await s.api
      .knex('pix_keys')
      .insert({ id, merchant_id: m.merchantId, type: 'CHAVE_ALEATORIA', key: crypto.randomUUID(), status: 'PENDING' });
    const started = await reconcilePixKeyRegistrations({
      knex: s.api.knex,
      workflows: s.pixKeys,
      logger: createLogger({ level: 'silent' }),
    });
    assert.ok(started >= 1);
    await untilKey(id, 'ACTIVE');
    // Registered keys are not picked again.
    await s.client.workflow.getHandle(pixKeyWorkflowId(id)).result();
    const again = await s.api.knex('pix_keys').where({ id }).whereNull('acquirer_key_id').first();
    assert.equal(again, undefined);
  });
});
