/**
 * Response shapes of the endpoints, as zod schemas, for the OpenAPI document only (responses are
 * built by the services' view functions, not validated). Field lists follow the API contract
 * (docs/api.md "Reference: /docs and /openapi.json").
 */
import { z } from 'zod';
import { PIX_KEY_TYPES } from '../pix/pix-key';
import { CHARGE_STATUSES, KYC_STATUSES, MERCHANT_STATUSES, PIX_KEY_STATUSES, USER_ROLES } from '../contracts/statuses';

// The error shape lives with its code catalogue (docs/api.md "Errors").
export { errorBody } from '../contracts/errors';
export const messageBody = z.object({ message: z.string() });

const isoTime = z.iso.datetime();
const customer = z.object({ id: z.string(), name: z.string(), document: z.string() }).nullable();

export const chargeCreated = z.object({
  charge: z.object({
    id: z.string(),
    txid: z.string(),
    qrCode: z.string().describe('EMV BR Code (copy and paste)'),
    imageBase64: z.string().describe('data:image/png;base64,…'),
    amount: z.int(),
    status: z.enum(CHARGE_STATUSES),
    expiresIn: z.int(),
    customer,
  }),
});
export const chargeReplayed = z.object({
  charge: z.object({
    id: z.string(),
    txid: z.string().nullable(),
    qrCode: z.string().nullable(),
    amount: z.int(),
    status: z.enum(CHARGE_STATUSES),
    expiresIn: z.int(),
    customer,
    createdAt: isoTime,
  }),
  idempotent: z.literal(true),
});
export const chargeListItem = z.object({
  id: z.string(),
  txid: z.string().nullable(),
  qrCode: z.string().nullable(),
  amount: z.int(),
  description: z.string(),
  status: z.enum(CHARGE_STATUSES),
  expiresIn: z.int(),
  paidAt: isoTime.nullable(),
  createdAt: isoTime,
  customer,
});
export const chargeList = z.object({ page: z.int(), limit: z.int(), total: z.int(), charges: z.array(chargeListItem) });
export const chargeOne = z.object({ charge: chargeListItem });
export const refundRequested = z.object({
  refund: z.object({
    id: z.string(),
    chargeId: z.string(),
    amount: z.int(),
    reason: z.string().nullable(),
    status: z.literal('REQUESTED'),
  }),
});

export const loginResult = z.object({
  token: z.string().describe('JWT (HS256)'),
  user: z.object({ id: z.string(), email: z.string(), role: z.enum(USER_ROLES) }),
});

const apiKey = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.literal('ACTIVE'),
  createdAt: isoTime,
};
export const apiKeyCreated = z.object({
  apiKey: z.object({ ...apiKey, value: z.string().describe('pixflow_…, shown only here') }),
});
export const apiKeyList = z.object({
  apiKeys: z.array(z.object({ ...apiKey, value: z.string().describe('Masked'), lastUsedAt: isoTime.nullable() })),
});

const pixKey = z.object({
  id: z.string(),
  type: z.enum(PIX_KEY_TYPES),
  key: z.string(),
  status: z.enum(PIX_KEY_STATUSES),
});
const merchantProfile = {
  id: z.string(),
  name: z.string(),
  status: z.enum(MERCHANT_STATUSES),
  kycStatus: z.enum(KYC_STATUSES),
  acquirerConfigured: z.boolean(),
  pixKey: pixKey.nullable(),
  feeBps: z.int(),
  feeFixed: z.int(),
  settlementDelaySeconds: z.int(),
};
export const merchantMe = z.object({ merchant: z.looseObject(merchantProfile) });
const merchantAdmin = z.looseObject({
  ...merchantProfile,
  document: z.string(),
  email: z.string(),
  acquirerAccountId: z.string().nullable(),
  pixKeys: z.array(pixKey),
  updatedAt: isoTime,
});
export const merchantOne = z.object({ merchant: merchantAdmin });
export const merchantCreated = z.object({
  merchant: merchantAdmin,
  user: z.object({ id: z.string(), email: z.string(), role: z.literal('USER') }),
});
export const merchantList = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  merchants: z.array(merchantAdmin),
});
export const pixKeyOne = z.object({ pixKey });

/** A sandbox key action: the key as it is now; its new status follows by the acquirer's callback. */
export const sandboxPixKey = z.object({ message: z.string(), pixKey });
export const balanceBody = z.object({
  balance: z.object({ available: z.int(), pending: z.int(), blocked: z.int(), total: z.int() }),
});
export const auditLog = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  entries: z.array(z.looseObject({ id: z.string(), action: z.string() })),
});
export const health = z.object({ status: z.literal('ok') });
export const readiness = z.object({ status: z.literal('ok'), checks: z.record(z.string(), z.enum(['ok', 'failed'])) });
export const sandboxPaid = z.object({ message: z.string(), endToEndId: z.string() });
