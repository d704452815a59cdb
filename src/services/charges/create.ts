/**
 * Creating an immediate charge (docs/architecture.md "Charges: how they work"), step by step: the
 * checks (or the replay of a used key), the row, the workflow beside the cob at the acquirer, the
 * BR Code stored, the answer. Each step takes the service's context first.
 */
import type { Cob } from '../../acquirer/types';
import type { CreateChargeBody } from '../../contracts/charges';
import { conflict, unprocessable, upstream } from '../../lib/errors';
import { errorMessage } from '../../lib/error-message';
import { newId } from '../../lib/ids';
import { recordChargeCreated } from '../../observability/metrics';
import { isValidDocument, newTxid, renderQrDataUrl } from '../../pix';
import { chargesStore, type NewCharge } from '../../stores/charges';
import {
  createCobWithRetries,
  dropListCache,
  prerequisites,
  replayOf,
  tell,
  type ChargesContext,
  type CreateChargeResult,
} from './context';
import type { CustomerView } from './views';

/** The row as inserted: when, and the customer its upsert gave (null without a customer). */
interface Inserted {
  createdAt: Date;
  customerId: string | null;
}

export async function create(
  ctx: ChargesContext,
  merchantId: string,
  input: CreateChargeBody,
  idempotencyKey?: string,
): Promise<CreateChargeResult> {
  const admitted = await admit(ctx, merchantId, input, idempotencyKey);
  if ('replayed' in admitted) return admitted.replayed;
  const charge = newImmediateCharge(merchantId, input, idempotencyKey);
  const inserted = await insertNew(ctx, charge, input, idempotencyKey);
  // Lost the race for this idempotency key: answer with the winner's charge.
  if (!inserted) return replayOfWinner(ctx, merchantId, idempotencyKey as string);
  dropListCache(ctx, merchantId);
  const workflowStarted = startWorkflow(ctx, charge);
  const cob = await openCob(ctx, charge, input, admitted.pixKey, workflowStarted);
  const imageBase64 = await storeBrCode(ctx, charge, cob, workflowStarted);
  dropListCache(ctx, merchantId);
  recordChargeCreated(input.amount);
  return {
    replay: false,
    charge: {
      id: charge.id,
      type: 'IMMEDIATE',
      txid: charge.txid,
      qrCode: cob.pixCopiaECola,
      amount: input.amount,
      status: 'PENDING',
      expiresIn: input.expiresIn,
      customer: createdCustomer(input, inserted.customerId),
      createdAt: inserted.createdAt.toISOString(),
      imageBase64,
    },
  };
}

/**
 * The merchant's PIX key once the checks pass. A replay (any body: docs/api.md "Idempotency")
 * answers whatever a check would say now, so a key is looked up before any check could refuse the
 * request — but only then: on the usual path the insert finds a used key by itself (no extra round trip).
 */
async function admit(
  ctx: ChargesContext,
  merchantId: string,
  input: CreateChargeBody,
  idempotencyKey: string | undefined,
): Promise<{ pixKey: string } | { replayed: CreateChargeResult }> {
  try {
    if (input.customer && !isValidDocument(input.customer.document)) {
      throw unprocessable('customer.document is not a valid CPF or CNPJ', 'invalid_document', 'customer.document');
    }
    return await prerequisites(ctx, merchantId);
  } catch (err) {
    const replay = idempotencyKey ? await replayOf(ctx, merchantId, idempotencyKey) : null;
    if (replay) return { replayed: replay };
    throw err;
  }
}

function newImmediateCharge(merchantId: string, input: CreateChargeBody, idempotencyKey?: string): NewCharge {
  return {
    id: newId('ch'),
    merchantId,
    amount: input.amount,
    description: input.description,
    expiresIn: input.expiresIn,
    // The txid is ours (BCB lets the receiver choose it) and is stored with the row, before the
    // acquirer is called: should this process die between the cob and our next write, a payment of
    // that cob still finds its charge (which the reconciler will have FAILED) and goes back to the payer.
    txid: newTxid(),
    idempotencyKey: idempotencyKey ?? null,
    tracking: input.tracking,
  };
}

/** The row (and its customer), or null when the idempotency key was already taken. */
async function insertNew(
  ctx: ChargesContext,
  charge: NewCharge,
  input: CreateChargeBody,
  idempotencyKey: string | undefined,
): Promise<Inserted | null> {
  const { customer } = input;
  if (!customer) {
    const createdAt = await ctx.insertCharge(charge);
    return createdAt ? { createdAt, customerId: null } : null;
  }
  // No key, so no racing twin: the customer upsert and the charge go in one statement (a
  // data-modifying CTE), one round trip instead of five.
  if (!idempotencyKey) return chargesStore(ctx.knex).insertUnlessKeyTaken(charge, customer);
  return ctx.knex.transaction(async (trx) => {
    const charges = chargesStore(trx);
    const created = await charges.insertUnlessKeyTaken(charge);
    if (!created) return null;
    // Only the request that won the key writes the customer: a racing twin with another body
    // must not rewrite the customer's name or e-mail. One transaction, so the charge is never
    // seen without its customer.
    const customerId = await charges.upsertCustomer(charge.merchantId, customer);
    await charges.setCustomer(charge.id, customerId);
    return { createdAt: created.createdAt, customerId };
  });
}

async function replayOfWinner(ctx: ChargesContext, merchantId: string, key: string): Promise<CreateChargeResult> {
  const replay = await replayOf(ctx, merchantId, key);
  if (replay) return replay;
  throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
}

/**
 * The workflow starts beside the acquirer call, not after it: started with a delay to the
 * expiry, it reads nothing of the charge until its first task (the expiry itself, or earlier
 * when a payment or cancel arrives by signal-with-start), so it needs nothing the cob gives.
 * Should the cob fail, the charge is FAILED by then and that first task finds nothing owed.
 * The charge is payable at the acquirer once the cob exists, so the merchant gets its 201 even
 * if Temporal cannot start the workflow: a payment still reaches a workflow (every message is
 * signal-with-start), and the periodic reconciler starts the missing one so expiry happens too.
 */
function startWorkflow(ctx: ChargesContext, charge: NewCharge): Promise<void> {
  const { id, merchantId } = charge;
  return tell(
    ctx,
    () => ctx.workflows.start({ id, merchantId }, { startDelayMs: charge.expiresIn * 1000 }),
    { chargeId: id },
    'creation',
  );
}

/** The cob at the acquirer; its failure leaves the charge FAILED and answers 502. */
async function openCob(
  ctx: ChargesContext,
  charge: NewCharge,
  input: CreateChargeBody,
  pixKey: string,
  workflowStarted: Promise<void>,
): Promise<Cob> {
  try {
    return await createCobWithRetries(ctx, {
      txid: charge.txid,
      amount: input.amount,
      expiresIn: input.expiresIn,
      key: pixKey,
      description: input.description,
      debtor: input.customer ? { name: input.customer.name, document: input.customer.document } : undefined,
    });
  } catch (err) {
    ctx.logger.warn({ chargeId: charge.id, err: errorMessage(err) }, 'cob creation failed');
    // Kept FAILED with null txid and qrCode (docs/api.md "Charges"). Nobody was
    // given a BR Code for it. Guarded: only from PENDING (the reconciler may have failed it already).
    await chargesStore(ctx.knex).failCreation(charge.id, 'acquirer unavailable at creation');
    await workflowStarted;
    dropListCache(ctx, charge.merchantId);
    throw upstream('The acquirer could not create the charge; it was recorded as FAILED');
  }
}

/**
 * The BR Code stored and its image, rendered (off the main thread) meanwhile. The BR Code is
 * stored only on a charge still PENDING without one: if the reconciler took this creation for
 * interrupted (an acquirer slower than its threshold) and FAILED it, the charge stays FAILED,
 * its cob is removed, and the answer is the 502 that FAILED means — never a 201 for a charge
 * the database calls FAILED (the image is then thrown away).
 */
async function storeBrCode(
  ctx: ChargesContext,
  charge: NewCharge,
  cob: Cob,
  workflowStarted: Promise<void>,
): Promise<string> {
  const image = renderQrDataUrl(cob.pixCopiaECola);
  image.catch(() => undefined);
  const stored = await ctx.storeQrCode({ id: charge.id, qrCode: cob.pixCopiaECola });
  if (!stored) {
    await workflowStarted;
    await ctx.acquirer
      .removeCob(charge.txid)
      .catch((err: unknown) =>
        ctx.logger.warn(
          { chargeId: charge.id, err: errorMessage(err) },
          'cob of a charge failed meanwhile not removed',
        ),
      );
    dropListCache(ctx, charge.merchantId);
    throw upstream('The acquirer answered too late; the charge was recorded as FAILED');
  }
  const [imageBase64] = await Promise.all([image, workflowStarted]);
  return imageBase64;
}

/** The customer a creation answers with: the body's, under the id its upsert gave. */
function createdCustomer(input: Pick<CreateChargeBody, 'customer'>, customerId: string | null): CustomerView | null {
  return input.customer && customerId
    ? { id: customerId, name: input.customer.name, document: input.customer.document }
    : null;
}
