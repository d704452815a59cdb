/** Request schemas for charges (docs/api.md "Charges"). */
import { CHARGE_REFUND_VIEW_KINDS, CHARGE_STATUSES, CHARGE_TYPES, REFUND_STATUSES } from './statuses';
import net from 'node:net';
import { z } from 'zod';
import { isValidCustomerPhone } from '../pix/pix-key';
import { paginationQuery, text, idempotencyKeyHeader } from './validation';
import { isoTime } from './common';

export { CHARGE_STATUSES, CHARGE_TYPES };

const optionalText = (max: number) => text({ max }).optional();

export const trackingBody = z.object({
  utmSource: optionalText(255),
  utmMedium: optionalText(255),
  utmCampaign: optionalText(255),
  utmContent: optionalText(255),
  utmTerm: optionalText(255),
  fbclid: optionalText(500),
  fbc: optionalText(500),
  fbp: optionalText(500),
  sourceUrl: optionalText(2048),
  clientIp: text({ max: 45 })
    .refine((v) => net.isIP(v) !== 0, { message: 'must be an IPv4 or IPv6 address' })
    .optional(),
  userAgent: optionalText(1024),
});

export const customerBody = z.object({
  name: text({ min: 2, max: 200 }),
  email: z.email().max(254),
  phone: z.string().refine(isValidCustomerPhone, { message: 'must be 10 to 15 digits, digits only' }),
  // Shape here (400); check digits in the service (422).
  document: z
    .string()
    .regex(/^(\d{11}|\d{14})$/, { message: 'must be a CPF (11 digits) or CNPJ (14 digits), digits only' }),
});

export const createChargeBody = z.object({
  amount: z.int().min(1).max(1_000_000_000_00),
  description: text({ min: 1, max: 255 }),
  expiresIn: z.int().min(60).max(604_800).default(86_400),
  customer: customerBody.optional(),
  tracking: trackingBody.optional(),
});
export type CreateChargeBody = z.infer<typeof createChargeBody>;

export { idempotencyKeyHeader };

/** Pages past the end are empty; pages holding rows past the 10,000th are 400 (docs/api.md "Pagination limits"). */
export const listChargesQuery = paginationQuery.extend({
  status: z.enum(CHARGE_STATUSES).optional(),
  type: z.enum(CHARGE_TYPES).optional(),
});
export type ListChargesQuery = z.infer<typeof listChargesQuery>;

export const refundChargeBody = z
  .object({
    amount: z.int().min(1).max(1_000_000_000_00).optional(),
    reason: text({ min: 1, max: 140 }).optional(),
  })
  .default({});

export const sandboxPayBody = z
  .object({
    payer: z
      .object({
        name: text({ min: 1, max: 200 }),
        document: z.string().regex(/^(\d{11}|\d{14})$/, { message: 'must be 11 or 14 digits' }),
      })
      .optional(),
  })
  .default({});

// ---- responses: what the routes answer (charges/views.ts builds them; the OpenAPI document shows them)

export const customerView = z.object({ id: z.string(), name: z.string(), document: z.string() });

const chargeType = z
  .enum(CHARGE_TYPES)
  .describe('IMMEDIATE (pay now), DUE_DATE (a due date) or RECURRING (a subscription cycle)');

export const chargeListItem = z.object({
  id: z.string(),
  type: chargeType,
  txid: z.string().nullable(),
  qrCode: z.string().nullable(),
  amount: z.int(),
  description: z.string(),
  status: z.enum(CHARGE_STATUSES),
  expiresIn: z.int(),
  paidAt: isoTime.nullable(),
  createdAt: isoTime,
  customer: customerView.nullable(),
});

/** The replayed creation answer: no imageBase64, plus createdAt. */
export const chargeReplayView = z.object({
  id: z.string(),
  type: chargeType,
  txid: z.string().nullable(),
  qrCode: z.string().nullable(),
  amount: z.int(),
  status: z.enum(CHARGE_STATUSES),
  expiresIn: z.int(),
  customer: customerView.nullable(),
  createdAt: isoTime,
});

export const chargeCreatedView = chargeReplayView.extend({
  txid: z.string(),
  qrCode: z.string().describe('EMV BR Code (copy and paste)'),
  imageBase64: z.string().describe('data:image/png;base64,…'),
});

export const chargeCreatedResponse = z.object({ charge: chargeCreatedView });
export const chargeReplayedResponse = z.object({ charge: chargeReplayView, idempotent: z.literal(true) });
export const chargeListResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  charges: z.array(chargeListItem),
});
/** A refund of the charge's payment: the merchant's, or a MED devolução to the payer. */
export const chargeRefundView = z.object({
  id: z.string(),
  kind: z.enum(CHARGE_REFUND_VIEW_KINDS),
  amount: z.int(),
  status: z.enum(REFUND_STATUSES),
  reason: z.string().nullable(),
  createdAt: isoTime,
  completedAt: isoTime.nullable().describe('When the acquirer confirmed it; null while REQUESTED or when FAILED'),
});

export const payerView = z.object({ name: z.string(), document: z.string().describe('CPF or CNPJ, digits only') });

/** One charge (GET, cancel): the list's fields plus its payment and its refunds. */
export const chargeDetailView = chargeListItem.extend({
  payer: payerView.nullable().describe('Who paid, as the acquirer reported it; null until paid'),
  endToEndId: z.string().nullable().describe("The payment's PIX end-to-end id; null until paid"),
  fee: z.int().nullable().describe('The platform fee booked on the payment, in cents; null until paid'),
  refundedAmount: z.int().describe('Sum of the CONFIRMED refunds below (merchant and MED), in cents'),
  refunds: z.array(chargeRefundView).describe('Oldest first'),
});

export const chargeResponse = z.object({ charge: chargeDetailView });

export const refundRequestedView = z.object({
  id: z.string(),
  chargeId: z.string(),
  amount: z.int(),
  reason: z.string().nullable(),
  status: z.literal('REQUESTED'),
});
export const refundRequestedResponse = z.object({ refund: refundRequestedView });
export const refundReplayedResponse = z.object({ refund: refundRequestedView, idempotent: z.literal(true) });

export const sandboxPaidResponse = z.object({ message: z.string(), endToEndId: z.string() });
