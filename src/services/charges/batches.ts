/**
 * Charge batches (docs/api.md "Charge batches"): up to 1,000 due-date charge bodies under one
 * idempotency key, sent to the acquirer as one lotecobv. Each item is accepted or refused on its
 * own, by our checks first (its index and `{message, code}`) and then by the acquirer; an invalid
 * item never sinks the others. Accepted items are DUE_DATE charges like any other.
 */
import type { Knex } from 'knex';
import type { Acquirer, CobvRequest } from '../../acquirer/types';
import { createDueDateChargeBody, type CreateDueDateChargeBody } from '../../contracts/charges';
import { validate } from '../../contracts/validation';
import { BoundedConcurrency } from '../../lib/bounded-concurrency';
import { errorMessage } from '../../lib/error-message';
import { AppError, conflict, invalid, notFound } from '../../lib/errors';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { chargeBatchesStore, type BatchItemRow, type BatchRow } from '../../stores/charge-batches';
import { chargesStore, type NewCharge } from '../../stores/charges';
import { checkDueDateCharge, refusalOf, type DueDateCharges } from './due-date';

export interface ChargeBatchesDeps {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  dueDate: DueDateCharges;
}

export interface BatchView {
  id: string;
  status: BatchRow['status'];
  createdAt: string;
  completedAt: string | null;
  total: number;
  accepted: number;
  refused: number;
  items: Array<{
    index: number;
    status: BatchItemRow['status'];
    chargeId: string | null;
    error: { message: string; code: string } | null;
  }>;
}

/** How long the service asks the acquirer for the lotecobv's outcome before answering PENDING items. */
const OUTCOME_POLLS = 20;
const OUTCOME_POLL_MS = 100;

function viewOf(b: BatchRow, items: BatchItemRow[]): BatchView {
  return {
    id: b.id,
    status: b.status,
    createdAt: b.created_at.toISOString(),
    completedAt: b.completed_at ? b.completed_at.toISOString() : null,
    total: b.item_count,
    accepted: items.filter((i) => i.status === 'ACCEPTED').length,
    refused: items.filter((i) => i.status === 'REFUSED').length,
    items: items.map((i) => ({
      index: i.index,
      status: i.status,
      chargeId: i.charge_id,
      error: i.error_code ? { message: i.error_message ?? '', code: i.error_code } : null,
    })),
  };
}

/** One item: a charge to create, or its refusal (param paths are the item's, `items[3].dueDate`). */
function checkItem(
  raw: unknown,
  index: number,
): { input: CreateDueDateChargeBody } | { refusal: { message: string; code: string } } {
  try {
    const input = validate(createDueDateChargeBody, raw, `items[${index}]`);
    // A batch inserts its charges in bulk, without the customer upsert: refused rather than dropped.
    if (input.customer)
      throw invalid('customer is not taken in a batch item (payer is)', 'invalid_request', `items[${index}].customer`);
    checkDueDateCharge(input);
    return { input };
  } catch (err) {
    const refusal = refusalOf(err);
    if (!refusal) throw err;
    return { refusal: { message: refusal.message, code: refusal.code } };
  }
}

type Accepted = { index: number; charge: NewCharge; cobv: CobvRequest };
type Refused = { index: number; refusal: { message: string; code: string } };

/** Each item checked on its own: a charge to create, or its refusal. */
function decideItems(dueDate: DueDateCharges, merchantId: string, items: unknown[], pixKey: string) {
  return items.map((raw, index): Accepted | Refused => {
    const item = checkItem(raw, index);
    if (!('input' in item)) return { index, refusal: item.refusal };
    const rules = checkDueDateCharge(item.input);
    return { index, ...dueDate.newDueDateCharge(merchantId, item.input, rules, pixKey) };
  });
}

/** The accepted items' charges (PENDING, no BR Code yet) and every item's row, in one transaction. */
async function recordItems(knex: Knex, batchId: string, made: Array<Accepted | Refused>): Promise<Accepted[]> {
  const accepted = made.filter((m): m is Accepted => 'charge' in m);
  await knex.transaction(async (trx) => {
    for (let i = 0; i < accepted.length; i += 200)
      await chargesStore(trx).insertManyUnlessKeyTaken(accepted.slice(i, i + 200).map((a) => a.charge));
    await chargeBatchesStore(trx).insertItems(
      batchId,
      made.map((m) => ({
        index: m.index,
        charge_id: 'charge' in m ? m.charge.id : null,
        status: 'charge' in m ? 'PENDING' : 'REFUSED',
        error_code: 'refusal' in m ? m.refusal.code : null,
        error_message: 'refusal' in m ? m.refusal.message : null,
      })),
    );
  });
  return accepted;
}

/** The lotecobv sent, then its outcome asked until no request is EM_PROCESSAMENTO (bounded). */
async function outcomesAtAcquirer(
  deps: ChargeBatchesDeps,
  batch: BatchRow,
  description: string,
  accepted: Accepted[],
): Promise<Map<string, { status: string; reason?: string }>> {
  const acquirerId = Number(batch.acquirer_batch_id);
  let outcomes = new Map<string, { status: string; reason?: string }>();
  try {
    await deps.acquirer.createCobvBatch(
      acquirerId,
      description,
      accepted.map((a) => a.cobv),
    );
    for (let poll = 0; poll < OUTCOME_POLLS; poll++) {
      outcomes = new Map((await deps.acquirer.getCobvBatch(acquirerId)).map((o) => [o.txid, o]));
      if (![...outcomes.values()].some((o) => o.status === 'EM_PROCESSAMENTO')) break;
      await new Promise((r) => setTimeout(r, OUTCOME_POLL_MS));
    }
  } catch (err) {
    deps.logger.warn({ batchId: batch.id, err: errorMessage(err) }, 'lotecobv not accepted by the acquirer');
  }
  return outcomes;
}

/** One accepted item after the acquirer decided: its charge payable (BR Code, workflow), or FAILED and refused. */
async function settleItem(
  deps: ChargeBatchesDeps,
  a: Accepted,
  outcome: { status: string; reason?: string } | undefined,
): Promise<{ index: number; refusal: { code: string; message: string } | null }> {
  const charges = chargesStore(deps.knex);
  try {
    if (outcome?.status !== 'CRIADA') {
      const why =
        outcome?.reason ?? (outcome ? 'still processing at the acquirer' : 'the acquirer did not take the batch');
      throw new AppError('upstream_error', `The acquirer refused the charge: ${why}`);
    }
    const cobv = await deps.acquirer.getCobv(a.cobv.txid);
    await charges.storeQrCode(a.charge.id, cobv.pixCopiaECola);
    await deps.dueDate.startWorkflow(a.charge);
    return { index: a.index, refusal: null };
  } catch (err) {
    await charges.failCreation(a.charge.id, 'refused by the acquirer in a batch');
    const message = err instanceof AppError ? err.message : `The acquirer could not be asked: ${errorMessage(err)}`;
    return { index: a.index, refusal: { code: 'upstream_error', message } };
  }
}

export function createChargeBatches(deps: ChargeBatchesDeps) {
  const { knex, dueDate } = deps;
  const limit = new BoundedConcurrency(16, 2_000);

  async function get(merchantId: string, id: string): Promise<BatchView> {
    const b = await chargeBatchesStore(knex).findOwn(merchantId, id);
    if (!b) throw notFound('Charge batch not found');
    return viewOf(b, await chargeBatchesStore(knex).items(b.id));
  }

  async function create(
    merchantId: string,
    body: { description?: string; items: unknown[] },
    idempotencyKey?: string,
  ): Promise<{ replay: boolean; batch: BatchView }> {
    const pixKey = await dueDate.pixKeyOf(merchantId);
    const batches = chargeBatchesStore(knex);
    const batch = await batches.insertUnlessKeyTaken({
      id: newId('chb'),
      merchantId,
      idempotencyKey: idempotencyKey ?? null,
      itemCount: body.items.length,
    });
    if (!batch) {
      const first = await batches.findByIdempotencyKey(merchantId, idempotencyKey as string);
      if (!first)
        throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
      return { replay: true, batch: await get(merchantId, first.id) };
    }
    const accepted = await recordItems(knex, batch.id, decideItems(dueDate, merchantId, body.items, pixKey));
    dueDate.dropList(merchantId);
    if (accepted.length > 0) {
      const outcomes = await outcomesAtAcquirer(deps, batch, body.description ?? `Lote ${batch.id}`, accepted);
      const settled = await Promise.all(
        accepted.map((a) => limit.run(() => settleItem(deps, a, outcomes.get(a.cobv.txid)))),
      );
      await batches.settleItems(batch.id, settled);
    }
    await batches.complete(batch.id);
    dueDate.dropList(merchantId);
    return { replay: false, batch: await get(merchantId, batch.id) };
  }

  return { create, get };
}

export type ChargeBatches = ReturnType<typeof createChargeBatches>;
