/**
 * POST /v1/sandbox/pix-keys/:id/activate|deactivate
 * (docs/architecture.md "PIX keys: registration and activation") with the simulator's automatic completion off: a new key stays PENDING until the
 * merchant has the simulator announce it, and the status then arrives through the real path —
 * signed callback, inbox, PIX key callback handler — with `pixkey.updated`.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { eventually } from '../support/charges';
import { manualMedStack, pixKeyFlows, type MedStack } from '../support/med';
import { assertErrorBody } from '../support/errors';

interface SandboxKeyBody {
  message: string;
  pixKey: { id: string; type: string; key: string; status: string };
}

describe('sandbox PIX key activation', function () {
  this.timeout(120_000);
  let s: MedStack;

  before(async () => {
    s = await manualMedStack();
  });

  const { keyRow, untilKey } = pixKeyFlows(() => s);
  const keyEvents = async (keyId: string) => (await pixKeyFlows(() => s).keyEvents(keyId)).map((d) => d.status);
  const act = (token: string, id: string, action: string) =>
    s.api.request<SandboxKeyBody>('POST', `/v1/sandbox/pix-keys/${id}/${action}`, { token, body: {} });

  async function addKey(merchantId: string): Promise<SandboxKeyBody['pixKey']> {
    const res = await s.api.request<SandboxKeyBody>('POST', `/v1/admin/merchants/${merchantId}/pix-keys`, {
      token: await s.api.adminToken(),
      body: { type: 'CHAVE_ALEATORIA', key: crypto.randomUUID() },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.pixKey;
  }

  it('activates a key the simulator left PENDING, then deactivates it, each with pixkey.updated', async () => {
    const m = await s.api.createMerchant();
    const key = await addKey(m.merchantId);
    // Registered at the acquirer, and left PENDENTE there: nothing activates it on its own.
    const registered = await eventually(
      async () => ((await keyRow(key.id))?.acquirer_key_id as string | null) ?? undefined,
      'registration',
    );
    assert.equal(s.simulator.control.getKey(registered)?.status, 'PENDENTE');
    assert.equal((await keyRow(key.id)).status, 'PENDING');

    const activated = await act(m.token, key.id, 'activate');
    assert.equal(activated.status, 202, JSON.stringify(activated.body));
    assert.deepEqual(Object.keys(activated.body.pixKey).sort(), ['id', 'key', 'status', 'type']);
    assert.equal(activated.body.pixKey.id, key.id);
    await untilKey(key.id, 'ACTIVE');
    assert.equal(s.simulator.control.getKey(registered)?.status, 'ATIVA');
    // It came as the acquirer's signed callback, kept in the inbox.
    const inbox = await s.api
      .knex('acquirer_callbacks')
      .whereRaw('payload::text like ?', [`%${registered}%`])
      .select('status');
    assert.ok(inbox.length > 0, 'callback stored in the inbox');
    assert.deepEqual(await keyEvents(key.id), ['ATIVA']);
    const me = await s.api.request<{ merchant: { pixKey: { status: string } } }>('GET', '/v1/merchants/me', {
      token: m.token,
    });
    assert.equal(me.body.merchant.pixKey.status, 'ACTIVE');

    const deactivated = await act(m.token, key.id, 'deactivate');
    assert.equal(deactivated.status, 202);
    await untilKey(key.id, 'INACTIVE');
    assert.deepEqual(await keyEvents(key.id), ['ATIVA', 'INATIVA']);
    // The acquirer never revives an INACTIVE key: said, not silently ignored.
    const again = await act(m.token, key.id, 'activate');
    assert.equal(again.status, 400);
    assert.match(again.body.message, /INACTIVE PIX key is not re-activated/);
  });

  it("another merchant's key and an unknown key are 404; no credential is 401", async () => {
    const owner = await s.api.createMerchant();
    const stranger = await s.api.createMerchant();
    const key = await addKey(owner.merchantId);
    for (const action of ['activate', 'deactivate']) {
      const res = await act(stranger.token, key.id, action);
      assert.equal(res.status, 404);
      assert.equal(assertErrorBody(res.body, '', { code: 'not_found' }).message, 'PIX key not found');
      assert.equal((await act(owner.token, 'pk_unknown', action)).status, 404);
      assert.equal((await s.api.request('POST', `/v1/sandbox/pix-keys/${key.id}/${action}`, { body: {} })).status, 401);
    }
    assert.equal((await keyRow(key.id)).status, 'PENDING');
    assert.deepEqual(await keyEvents(key.id), []);
  });
});
