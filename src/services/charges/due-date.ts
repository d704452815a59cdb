/**
 * Due-date charges (docs/api.md "Due-date charges"): `POST /v1/charges` with `dueDate` makes a
 * DUE_DATE charge, a BCB cobv at the acquirer. Its workflow is the charge workflow: it waits until
 * the end of validity (the charge's `expires_at`), takes the payment the payer's bank computed
 * (src/domain/due-date-amount.ts) and expires an unpaid charge after validity.
 */
import type { Knex } from 'knex';
import type { Acquirer, CobvRequest } from '../../acquirer/types';
import type { CreateDueDateChargeBody } from '../../contracts/charges';
import { amountDueOn, saoPauloDate, validityEnd, type DueDateRules } from '../../domain/due-date-amount';
import { AppError, conflict, forbidden, invalid, notFound, unprocessable, upstream } from '../../lib/errors';
import { errorMessage } from '../../lib/error-message';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { isValidDocument, newTxid, renderQrDataUrl } from '../../pix';
import { chargesStore, type NewCharge } from '../../stores/charges';
import type { ChargeWorkflows } from '../../temporal/clients/charge';
import { replayView } from './views';
import type { CreateChargeResult } from './charges';
import { replayOf } from './context';

export interface DueDateChargesDeps {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  workflows: ChargeWorkflows;
  /** Drops the merchant's cached list pages (the charges service's `dropListCache`). */
  onWrite?: (merchantId: string) => void;
}

/** Hundredths of a percent, as the domain counts them (2.5 → 250). */
const hundredths = (percent: number): number => Math.round(percent * 100);

/** The body's rules in the domain's terms. */
export function rulesOf(input: CreateDueDateChargeBody): DueDateRules {
  const { fine, interest, discount, abatement } = input;
  const rules: DueDateRules = { dueDate: input.dueDate, validityAfterDue: input.validityAfterDue };
  if (fine) rules.fine = fine.mode === 'FIXED' ? fine : { mode: 'PERCENT', percent: hundredths(fine.percent) };
  if (abatement)
    rules.abatement =
      abatement.mode === 'FIXED' ? abatement : { mode: 'PERCENT', percent: hundredths(abatement.percent) };
  if (interest)
    rules.interest =
      interest.mode === 'AMOUNT_PER_DAY'
        ? interest
        : { mode: 'PERCENT_PER_MONTH', percent: hundredths(interest.percent) };
  if (discount)
    rules.discount =
      discount.mode === 'FIXED_UNTIL'
        ? { mode: 'FIXED_UNTIL', until: discount.until.map((d) => ({ ...d })) }
        : {
            mode: 'PERCENT_UNTIL',
            until: discount.until.map((d) => ({ date: d.date, percent: hundredths(d.percent) })),
          };
  return rules;
}

/**
 * The rules a schema cannot check (400 `invalid_request`, 422 for the payer's document): dates
 * not past and in order, a discount date on or before the due date, and an amount left to pay on
 * every day (a discount and an abatement smaller than the amount).
 */
export function checkDueDateCharge(input: CreateDueDateChargeBody, now: Date = new Date()): DueDateRules {
  if (!isValidDocument(input.payer.document))
    throw unprocessable('payer.document is not a valid CPF or CNPJ', 'invalid_document', 'payer.document');
  const today = saoPauloDate(now);
  if (input.dueDate < today) throw invalid('dueDate is in the past (America/Sao_Paulo)', 'invalid_request', 'dueDate');
  const dates = input.discount?.until.map((d) => d.date) ?? [];
  dates.forEach((date, i) => {
    const param = `discount.until[${i}].date`;
    if (date < today) throw invalid(`${param} is in the past`, 'invalid_request', param);
    if (date > input.dueDate) throw invalid(`${param} is after dueDate`, 'invalid_request', param);
    if (i > 0 && date <= (dates[i - 1] as string))
      throw invalid('discount.until dates must be distinct and in ascending order', 'invalid_request', param);
  });
  const rules = rulesOf(input);
  // The cheapest day is the first: the largest discount, the abatement, nothing added.
  const cheapest = amountDueOn(input.amount, rules, dates[0] ?? input.dueDate);
  if (cheapest.abatement >= input.amount)
    throw invalid('abatement must be less than amount', 'invalid_request', 'abatement');
  if (cheapest.total < 1)
    throw invalid('discount and abatement together must leave something to pay', 'invalid_request', 'discount');
  return rules;
}

/** The merchant's active PIX key, or 403 naming every unmet prerequisite (as immediate charges). */
async function pixKeyOf(knex: Knex, merchantId: string): Promise<string> {
  const row = await chargesStore(knex).creationPrerequisites(merchantId);
  if (!row) throw notFound('Merchant not found');
  const missing: string[] = [];
  if (row.kyc_status !== 'APPROVED') missing.push('KYC not approved');
  if (!row.acquirer_account_id) missing.push('acquirer account not configured');
  if (!row.pix_key) missing.push('no active PIX key');
  if (missing.length > 0) throw forbidden(`Cannot create charges: ${missing.join('; ')}`);
  if (row.status !== 'ACTIVE') throw forbidden('Cannot create charges: merchant is suspended');
  return row.pix_key as string;
}

/** The charge's row and its cobv request; its expiry is the end of validity, which its workflow waits for. */
export function newDueDateCharge(
  merchantId: string,
  input: CreateDueDateChargeBody,
  rules: DueDateRules,
  pixKey: string,
): { charge: NewCharge; cobv: CobvRequest } {
  const txid = newTxid();
  const charge: NewCharge = {
    id: newId('ch'),
    merchantId,
    type: 'DUE_DATE',
    amount: input.amount,
    description: input.description,
    expiresIn: Math.max(60, Math.ceil((validityEnd(rules).getTime() - Date.now()) / 1000)),
    txid,
    idempotencyKey: null,
    tracking: input.tracking,
    dueRules: rules,
  };
  const debtor = { name: input.payer.name, document: input.payer.document };
  return { charge, cobv: { txid, amount: input.amount, key: pixKey, description: input.description, debtor, rules } };
}

/** Started delayed to the end of validity; a failure is logged (the reconciler starts it). */
async function startWorkflow(deps: DueDateChargesDeps, charge: NewCharge): Promise<void> {
  try {
    await deps.workflows.start(
      { id: charge.id, merchantId: charge.merchantId },
      { startDelayMs: charge.expiresIn * 1000 },
    );
  } catch (err) {
    deps.logger.error({ chargeId: charge.id, err: errorMessage(err) }, 'charge workflow not started at creation');
  }
}

export function createDueDateCharges(deps: DueDateChargesDeps) {
  const { knex, logger, acquirer } = deps;
  const dropList = (merchantId: string): void => deps.onWrite?.(merchantId);

  /** The cobv at the acquirer and its BR Code stored; a refusal leaves the charge FAILED (502). */
  async function issue(charge: NewCharge, cobv: CobvRequest): Promise<string> {
    let qrCode: string;
    try {
      qrCode = (await acquirer.createCobv(cobv)).pixCopiaECola;
    } catch (err) {
      logger.warn({ chargeId: charge.id, err: errorMessage(err) }, 'cobv creation failed');
      await chargesStore(knex).failCreation(charge.id, 'acquirer unavailable at creation');
      dropList(charge.merchantId);
      throw upstream('The acquirer could not create the charge; it was recorded as FAILED');
    }
    if (!(await chargesStore(knex).storeQrCode(charge.id, qrCode)))
      throw upstream('The acquirer answered too late; the charge was recorded as FAILED');
    return qrCode;
  }

  async function create(
    merchantId: string,
    input: CreateDueDateChargeBody,
    idempotencyKey?: string,
  ): Promise<CreateChargeResult> {
    const replay = idempotencyKey ? await replayOf({ knex }, merchantId, idempotencyKey) : null;
    if (replay) return replay;
    const rules = checkDueDateCharge(input);
    const { charge, cobv } = newDueDateCharge(merchantId, input, rules, await pixKeyOf(knex, merchantId));
    charge.idempotencyKey = idempotencyKey ?? null;
    if (!(await chargesStore(knex).insertUnlessKeyTaken(charge, input.customer))) {
      const winner = await replayOf({ knex }, merchantId, idempotencyKey as string);
      if (winner) return winner;
      throw conflict('A request with this idempotency key is still being processed', 'idempotency_key_in_use');
    }
    dropList(merchantId);
    await startWorkflow(deps, charge);
    const qrCode = await issue(charge, cobv);
    dropList(merchantId);
    const row = await chargesStore(knex).findOwn(merchantId, charge.id);
    if (!row) throw notFound('Charge not found');
    return { replay: false, charge: { ...replayView(row), imageBase64: await renderQrDataUrl(qrCode) } };
  }

  return {
    create,
    newDueDateCharge,
    startWorkflow: (charge: NewCharge) => startWorkflow(deps, charge),
    pixKeyOf: (merchantId: string) => pixKeyOf(knex, merchantId),
    dropList,
  };
}

export type DueDateCharges = ReturnType<typeof createDueDateCharges>;

/** An item's refusal as `{message, code}` (and `param`), for batches. */
export function refusalOf(err: unknown): { message: string; code: string; param?: string } | null {
  if (!(err instanceof AppError)) return null;
  return { message: err.message, code: err.code, ...(err.param ? { param: err.param } : {}) };
}
