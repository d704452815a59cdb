/**
 * Merchants' MED infractions end to end (docs/api.md "Infractions"): the sandbox raises an
 * infraction on a paid charge with a scripted analysis, the merchant defends it over real HTTP
 * (multipart), the real worker's `infraction-<id>` workflow sends the stored defense to the
 * simulator — once, through injected faults — and the simulator's analysis arrives by its signed
 * callback: AGREED → the payment's MED refund, DISAGREED → the block released. Every refusal is a
 * `{message, code}` 4xx that stores nothing.
 */
import assert from 'node:assert/strict';
import { checkLedgerInvariant } from '../../src/services/ledger/invariant';
import { infractionWorkflowId } from '../../src/temporal/workflow-ids';
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { reconcileInfractionWorkflows } from '../../src/services/med/reconciler';
import { eventually, readyMerchant } from '../support/charges';
import { medFlows, medStack, type MedStack } from '../support/med';
import { assertResponseMatchesDocument } from '../support/openapi-validator';
import type { MerchantFixture } from '../support/api';

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj <<>> endobj\n'), Buffer.alloc(2_000, 0x20)]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(500, 7)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 1)]);

interface Upload {
  name: string;
  type: string;
  content: Buffer;
}

interface DefenseBody {
  defense: {
    id: string;
    status: string;
    defense: string;
    files: Array<{ id: string; name: string; mimeType: string; size: number }>;
    createdAt: string;
  };
}

interface InfractionDetail {
  id: string;
  chargeId: string;
  endToEndId: string;
  amount: number;
  reason: string;
  reportDetails: string | null;
  status: string;
  defenseDeadline: string;
  blockedAmount: number;
  refundedAmount: number;
  analysisResult: string | null;
  createdAt: string;
  updatedAt: string;
  defenses: Array<DefenseBody['defense']>;
}

interface ErrorAnswer {
  message: string;
  code: string;
  param?: string;
}

describe('MED defenses', function () {
  this.timeout(180_000);
  let s: MedStack;
  const merchants: string[] = [];

  before(async () => {
    s = await medStack();
  });
  afterEach(() => s.simulator.control.setFaults({}));
  after(async () => {
    const report = await checkLedgerInvariant(s.api.knex, { merchantIds: merchants });
    assert.deepEqual(report.violations, []);
  });

  const { paidCharge, untilBalance, untilInfraction, raise } = medFlows(() => s);
  const knex = () => s.api.knex;

  async function merchant(): Promise<MerchantFixture> {
    const m = await readyMerchant(s.api, { feeBps: 0 });
    merchants.push(m.merchantId);
    return m;
  }

  /** POST …/defenses as multipart/form-data, checked against the OpenAPI document like every answer. */
  async function defend<T = DefenseBody>(
    m: MerchantFixture,
    infractionId: string,
    form: { defense?: string; files?: Upload[]; field?: string },
  ): Promise<{ status: number; body: T }> {
    const data = new FormData();
    if (form.defense !== undefined) data.append('defense', form.defense);
    for (const f of form.files ?? [])
      data.append(form.field ?? 'files', new Blob([f.content], { type: f.type }), f.name);
    const path = `/v1/infractions/${infractionId}/defenses`;
    const res = await fetch(s.api.baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.token}` },
      body: data,
    });
    const body = (await res.json()) as T;
    assertResponseMatchesDocument('POST', path, res.status, res.headers.get('content-type'), body);
    return { status: res.status, body };
  }

  const detail = async (m: MerchantFixture, id: string) =>
    s.api.request<{ infraction: InfractionDetail }>('GET', `/v1/infractions/${id}`, { token: m.token });

  const acquirerIdOf = async (id: string): Promise<string> =>
    ((await knex()('infractions').where({ id }).first()) as { acquirer_infraction_id: string }).acquirer_infraction_id;

  const storedDefenses = async (id: string) => {
    const defenses = (await knex()('infraction_defenses').where({ infraction_id: id }).select('id')) as Array<{
      id: string;
    }>;
    const files = await knex()('infraction_defense_files').whereIn(
      'defense_id',
      defenses.map((d) => d.id),
    );
    return { defenses: defenses.length, files: files.length };
  };

  function assertError(res: { status: number; body: unknown }, status: number, code: string): ErrorAnswer {
    const body = res.body as ErrorAnswer;
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.code, code);
    assert.equal(typeof body.message, 'string');
    assert.ok(body.message.length > 0);
    return body;
  }

  it('a defense with two files is forwarded once despite acquirer faults; AGREED → the MED refund', async () => {
    const m = await merchant();
    const charge = await paidCharge(m, { settle: true });
    const inf = await raise(m, charge.id, 'Golpe do falso vendedor', {
      analysisResult: 'AGREED',
      reportDetails: 'O pagador relata não ter recebido o produto',
    });
    await untilBalance(m, { available: 0, pending: 0, blocked: 10_000, total: 10_000 }, 'the amount blocked');

    const before = await detail(m, inf.id);
    assert.equal(before.status, 200);
    assert.equal(before.body.infraction.status, 'OPEN');
    assert.equal(before.body.infraction.analysisResult, null);
    assert.equal(before.body.infraction.reportDetails, 'O pagador relata não ter recebido o produto');
    assert.equal(before.body.infraction.blockedAmount, 10_000);
    assert.deepEqual(before.body.infraction.defenses, []);
    const window = Date.parse(before.body.infraction.defenseDeadline) - Date.parse(before.body.infraction.createdAt);
    assert.ok(Math.abs(window - 72 * 3_600_000) < 60_000, `a 72 h window, got ${window} ms`);

    // The acquirer fails the first two sends; the activity's retries get it through.
    s.simulator.control.setFaults({ failNext: { route: 'defense', times: 2, status: 503 } });
    const sent = await defend(m, inf.id, {
      defense: 'O produto foi entregue; seguem o comprovante de entrega e a conversa com o cliente.',
      files: [
        { name: 'comprovante.pdf', type: 'application/pdf', content: PDF },
        { name: 'conversa.png', type: 'image/png', content: PNG },
      ],
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.equal(sent.body.defense.status, 'PENDING');
    assert.deepEqual(
      sent.body.defense.files.map((f) => [f.name, f.mimeType, f.size]),
      [
        ['comprovante.pdf', 'application/pdf', PDF.length],
        ['conversa.png', 'image/png', PNG.length],
      ],
    );

    // The scripted analysis (AGREED) follows the defense: the existing MED refund path returns the money.
    const done = await untilInfraction(inf.id, 'REFUNDED');
    assert.deepEqual(await s.client.workflow.getHandle(infractionWorkflowId(inf.id)).result(), { status: 'REFUNDED' });
    const acquirerId = await acquirerIdOf(inf.id);
    const atAcquirer = s.simulator.control.getInfraction(acquirerId);
    assert.equal(atAcquirer?.defense?.idempotencyKey, sent.body.defense.id);
    assert.deepEqual(
      atAcquirer?.defense?.files.map((f) => [f.name, f.mimeType, f.size]),
      [
        ['comprovante.pdf', 'application/pdf', PDF.length],
        ['conversa.png', 'image/png', PNG.length],
      ],
    );
    const sends = s.simulator.control.calls.filter((c) => c.route === 'defense' && c.path?.includes(acquirerId));
    assert.deepEqual(
      sends.map((c) => c.status),
      [503, 503, 201],
    );
    // A send again under the same key (an answer lost in transit) is the same defense, not a second one.
    const replay = await s.acquirer.submitInfractionDefense(acquirerId, sent.body.defense.id, {
      text: 'O produto foi entregue; seguem o comprovante de entrega e a conversa com o cliente.',
      files: [],
    });
    assert.equal(replay.defenseId, atAcquirer?.defense?.id);

    const after = (await detail(m, inf.id)).body.infraction;
    assert.equal(after.status, 'REFUNDED');
    assert.equal(after.analysisResult, 'AGREED');
    assert.equal(after.refundedAmount, 10_000);
    assert.equal(after.blockedAmount, 0);
    assert.equal(after.defenses.length, 1);
    assert.equal(after.defenses[0]?.status, 'DEFENDED');

    const refund = await knex()('charge_refunds').where({ id: done.refund_id }).first();
    assert.equal(refund.kind, 'INFRACTION');
    assert.equal(refund.status, 'CONFIRMED');
    assert.equal((await knex()('charges').where({ id: charge.id }).first()).status, 'REFUNDED');
    await untilBalance(m, { available: 0, pending: 0, blocked: 0, total: 0 }, 'the payment returned');
    const updated = await knex()('events')
      .where({ merchant_id: m.merchantId, type: 'infraction.updated' })
      .select('data');
    assert.deepEqual(
      updated.map((e: { data: { status: string } }) => e.data.status),
      ['ACCEPTED'],
    );

    // The merchant downloads its evidence as sent.
    const file = sent.body.defense.files[0] as { id: string };
    const url = `/v1/infractions/${inf.id}/defenses/${sent.body.defense.id}/files/${file.id}`;
    const res = await fetch(s.api.baseUrl + url, { headers: { authorization: `Bearer ${m.token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="comprovante\.pdf"/);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(PDF));

    // Another merchant: the file, the infraction and its defense are not found.
    const other = await merchant();
    assertError(await s.api.request('GET', url, { token: other.token }), 404, 'not_found');
    assertError(await detail(other, inf.id), 404, 'not_found');
    assertError(await defend(other, inf.id, { defense: 'x' }), 404, 'not_found');
  });

  it('DISAGREED → the block is released; the closed infraction then takes no defense (422)', async () => {
    const m = await merchant();
    const charge = await paidCharge(m, { settle: true, amount: 4_000 });
    const inf = await raise(m, charge.id, 'Suspeita de fraude', { analysisResult: 'DISAGREED' });
    await untilBalance(m, { available: 0, pending: 0, blocked: 4_000, total: 4_000 }, 'the amount blocked');
    const sent = await defend(m, inf.id, {
      defense: 'Venda legítima: nota fiscal em anexo.',
      files: [{ name: 'nota.jpg', type: 'image/jpeg', content: JPEG }],
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    await untilInfraction(inf.id, 'REJECTED');
    await untilBalance(m, { available: 4_000, pending: 0, blocked: 0, total: 4_000 }, 'the block released');
    const after = (await detail(m, inf.id)).body.infraction;
    assert.equal(after.analysisResult, 'DISAGREED');
    assert.equal(after.refundedAmount, 0);
    assert.equal(after.defenses[0]?.status, 'DEFENDED');
    assert.equal((await knex()('charges').where({ id: charge.id }).first()).status, 'PAID');

    const again = await defend(m, inf.id, { defense: 'Mais uma vez' });
    assertError(again, 422, 'infraction_closed');
    assert.deepEqual(await storedDefenses(inf.id), { defenses: 1, files: 1 });
  });

  it('refuses each bad defense with a clear {message, code} and stores nothing', async () => {
    const m = await merchant();
    const charge = await paidCharge(m, { settle: true, amount: 2_000 });
    const inf = await raise(m, charge.id);
    const ok = { name: 'a.pdf', type: 'application/pdf', content: PDF };

    assert.equal(assertError(await defend(m, inf.id, { files: [ok] }), 400, 'validation_error').param, 'defense');
    assert.equal(assertError(await defend(m, inf.id, { defense: '   ' }), 400, 'validation_error').param, 'defense');
    const long = assertError(await defend(m, inf.id, { defense: 'a'.repeat(1_001) }), 400, 'validation_error');
    assert.match(long.message, /at most 1000 characters/);
    const six = assertError(
      await defend(m, inf.id, { defense: 'seis', files: Array.from({ length: 6 }, () => ok) }),
      400,
      'validation_error',
    );
    assert.equal(six.param, 'files');
    assertError(
      await defend(m, inf.id, { defense: 'campo errado', files: [ok], field: 'evidence' }),
      400,
      'validation_error',
    );
    // Over 10 MB in all: refused from its Content-Length, and just over, while it streams.
    const big = {
      name: 'big.pdf',
      type: 'application/pdf',
      content: Buffer.concat([PDF, Buffer.alloc(11 * 1024 * 1024)]),
    };
    assertError(await defend(m, inf.id, { defense: 'grande', files: [big] }), 413, 'payload_too_large');
    const justOver = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 - PDF.length + 1)]);
    assertError(
      await defend(m, inf.id, { defense: 'grande', files: [{ ...ok, content: justOver }] }),
      413,
      'payload_too_large',
    );
    // Named and typed as a PDF, but its bytes are text.
    const fake = { name: 'fake.pdf', type: 'application/pdf', content: Buffer.from('just text, not a PDF') };
    const typed = assertError(
      await defend(m, inf.id, { defense: 'falso', files: [ok, fake] }),
      415,
      'unsupported_file_type',
    );
    assert.equal(typed.param, 'files[1]');
    const json = await s.api.request(`POST`, `/v1/infractions/${inf.id}/defenses`, {
      token: m.token,
      body: { defense: 'em JSON' },
    });
    assertError(json, 400, 'validation_error');
    // A body that is not the multipart it claims, and one sent compressed: refused, never a 500.
    const raw = (body: string, headers: Record<string, string>) =>
      s.api.request(`POST`, `/v1/infractions/${inf.id}/defenses`, { token: m.token, rawBody: body, headers });
    assertError(
      await raw('--b\r\nno headers, no end', { 'content-type': 'multipart/form-data; boundary=b' }),
      400,
      'malformed_body',
    );
    assertError(
      await raw('x', { 'content-type': 'multipart/form-data; boundary=b', 'content-encoding': 'gzip' }),
      415,
      'unsupported_content_encoding',
    );
    assert.deepEqual(await storedDefenses(inf.id), { defenses: 0, files: 0 });

    // One defense, then no second.
    assert.equal((await defend(m, inf.id, { defense: 'A primeira' })).status, 201);
    assertError(await defend(m, inf.id, { defense: 'A segunda' }), 422, 'defense_already_submitted');
    assert.deepEqual(await storedDefenses(inf.id), { defenses: 1, files: 0 });
    await eventually(
      async () =>
        (await knex()('infraction_defenses').where({ infraction_id: inf.id }).first())?.status === 'DEFENDED'
          ? true
          : undefined,
      'the defense forwarded',
    );

    // Past its deadline.
    const late = await raise(m, (await paidCharge(m, { settle: true, amount: 1_000 })).id);
    await knex()('infractions')
      .where({ id: late.id })
      .update({ defense_deadline: knex().raw(`now() - interval '1 minute'`) });
    assertError(await defend(m, late.id, { defense: 'Tarde demais' }), 422, 'defense_deadline_passed');
    assert.deepEqual(await storedDefenses(late.id), { defenses: 0, files: 0 });
    // Unknown infraction.
    assertError(await defend(m, 'inf_unknown', { defense: 'x' }), 404, 'not_found');
  });

  it('a defense whose signal was lost is sent once the reconciler wakes its workflow', async () => {
    const m = await merchant();
    const inf = await raise(m, (await paidCharge(m, { settle: true, amount: 1_200 })).id, 'Sinal perdido', {
      analysisResult: 'DISAGREED',
    });
    await untilBalance(m, { available: 0, pending: 0, blocked: 1_200, total: 1_200 }, 'the amount blocked');
    // Stored as the API stores it, but no signal reached the workflow (Temporal was away).
    const defenseId = newId('dfs');
    await knex()('infraction_defenses').insert({
      id: defenseId,
      infraction_id: inf.id,
      merchant_id: m.merchantId,
      defense: 'Enviada sem sinal',
    });
    await reconcileInfractionWorkflows({
      knex: knex(),
      workflows: s.infractions,
      logger: createLogger({ level: 'silent' }),
    });
    await untilInfraction(inf.id, 'REJECTED');
    const row = await knex()('infraction_defenses').where({ id: defenseId }).first();
    assert.equal(row.status, 'DEFENDED');
    assert.equal(s.simulator.control.getInfraction(await acquirerIdOf(inf.id))?.defense?.idempotencyKey, defenseId);
  });

  it('lists only the merchant’s own infractions, filtered by a validated status', async () => {
    const m = await merchant();
    const other = await merchant();
    const a = await raise(m, (await paidCharge(m, { settle: true, amount: 1_500 })).id);
    const b = await raise(m, (await paidCharge(m, { settle: true, amount: 2_500 })).id, 'Outro', {
      analysisResult: 'DISAGREED',
    });
    const theirs = await raise(other, (await paidCharge(other, { settle: true, amount: 3_500 })).id);
    assert.equal((await defend(m, b.id, { defense: 'Legítima' })).status, 201);
    await untilInfraction(b.id, 'REJECTED');

    const all = await s.api.request<{ page: number; limit: number; total: number; infractions: InfractionDetail[] }>(
      'GET',
      '/v1/infractions',
      { token: m.token },
    );
    assert.equal(all.status, 200);
    assert.equal(all.body.total, 2);
    assert.deepEqual(
      all.body.infractions.map((i) => i.id),
      [b.id, a.id],
    );
    const open = await s.api.request<{ total: number; infractions: InfractionDetail[] }>(
      'GET',
      '/v1/infractions?status=OPEN',
      { token: m.token },
    );
    assert.deepEqual(
      open.body.infractions.map((i) => i.id),
      [a.id],
    );
    const rejected = await s.api.request<{ total: number; infractions: InfractionDetail[] }>(
      'GET',
      '/v1/infractions?status=REJECTED&page=1&limit=1',
      { token: m.token },
    );
    assert.equal(rejected.body.total, 1);
    assert.equal(rejected.body.infractions[0]?.defenses[0]?.status, 'DEFENDED');
    const bogus = assertError(
      await s.api.request('GET', '/v1/infractions?status=CLOSED', { token: m.token }),
      400,
      'validation_error',
    );
    assert.equal(bogus.param, 'status');

    const theirList = await s.api.request<{ total: number; infractions: InfractionDetail[] }>(
      'GET',
      '/v1/infractions',
      { token: other.token },
    );
    assert.deepEqual(
      theirList.body.infractions.map((i) => i.id),
      [theirs.id],
    );
    assertError(await detail(other, a.id), 404, 'not_found');
    // An API key reads them as the dashboard's session does.
    const key = await s.api.createApiKey(m.token);
    const byKey = await s.api.request<{ infraction: InfractionDetail }>('GET', `/v1/infractions/${a.id}`, {
      token: key.value,
    });
    assert.equal(byKey.status, 200);
    assert.equal(byKey.body.infraction.id, a.id);
  });
});
