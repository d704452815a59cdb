/** Request and response schemas for subscriptions, Pix Automático (docs/api.md "Subscriptions"). */
import { z } from 'zod';
import {
  SUBSCRIPTION_CYCLE_STATUSES,
  SUBSCRIPTION_PERIODICITIES,
  SUBSCRIPTION_RETRY_POLICIES,
  SUBSCRIPTION_STATUSES,
} from './statuses';
import { idParam, paginationQuery, text } from './validation';
import { isoTime } from './common';

export { SUBSCRIPTION_STATUSES, SUBSCRIPTION_PERIODICITIES, SUBSCRIPTION_RETRY_POLICIES };

const cents = z.int().min(1).max(1_000_000_000_00);
const date = z.iso.date({ message: 'must be a date YYYY-MM-DD' });

export const createSubscriptionBody = z
  .object({
    payer: z.object({
      name: text({ min: 2, max: 140 }),
      // Shape here (400); check digits in the service (422), as on charges.
      document: z
        .string()
        .regex(/^(\d{11}|\d{14})$/, { message: 'must be a CPF (11 digits) or CNPJ (14 digits), digits only' }),
    }),
    periodicity: z.enum(SUBSCRIPTION_PERIODICITIES),
    amount: cents.optional().describe('A fixed amount per cycle, in cents'),
    maxAmount: cents.optional().describe('For variable amounts: the most one cycle may charge, in cents'),
    firstDate: date.describe('The first cycle’s debit date; at least 3 days ahead'),
    endDate: date.optional().describe('The last day a cycle may fall on; none: until canceled'),
    retryPolicy: z.enum(SUBSCRIPTION_RETRY_POLICIES).default('NONE'),
    description: text({ min: 1, max: 35 }).describe('What the payer sees in their bank (≤ 35 characters)'),
  })
  .refine((b) => (b.amount === undefined) !== (b.maxAmount === undefined), {
    message: 'give exactly one of amount (fixed) or maxAmount (variable)',
    path: ['amount'],
  })
  .refine((b) => b.endDate === undefined || b.endDate >= b.firstDate, {
    message: 'must not be before firstDate',
    path: ['endDate'],
  });
export type CreateSubscriptionBody = z.infer<typeof createSubscriptionBody>;

/** A variable subscription's cycle amount, set before that cycle's cobr exists (docs/api.md "Variable amounts"). */
export const cycleAmountParams = z.object({
  id: idParam,
  number: z
    .string()
    .regex(/^\d{1,4}$/, { message: 'must be a cycle number (1 to 9999)' })
    .transform(Number)
    .pipe(z.int().min(1).max(9_999)),
});
export const setCycleAmountBody = z.object({
  amount: cents.describe('What this cycle charges, in cents; at most the subscription’s maxAmount'),
});
export type SetCycleAmountBody = z.infer<typeof setCycleAmountBody>;

export const listSubscriptionsQuery = paginationQuery.extend({
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
});
export type ListSubscriptionsQuery = z.infer<typeof listSubscriptionsQuery>;

// ---- responses

export const subscriptionCycleView = z.object({
  number: z.int(),
  dueDate: date,
  amount: z.int(),
  status: z.enum(SUBSCRIPTION_CYCLE_STATUSES),
  chargeId: z.string().nullable().describe('The cycle’s RECURRING charge (GET /v1/charges/:id)'),
  attempts: z.int().describe('Debit attempts so far: the due date, then each retry'),
  failureReason: z.string().nullable(),
  paidAt: isoTime.nullable(),
});

export const subscriptionView = z.object({
  id: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  payer: z.object({ name: z.string(), document: z.string() }),
  periodicity: z.enum(SUBSCRIPTION_PERIODICITIES),
  amount: z.int().nullable(),
  maxAmount: z.int().nullable(),
  firstDate: date,
  endDate: date.nullable(),
  retryPolicy: z.enum(SUBSCRIPTION_RETRY_POLICIES),
  description: z.string(),
  qrCode: z.string().nullable().describe('The authorisation BR Code (Pix Automático, JORNADA_2) while pending'),
  canceledBy: z.enum(['MERCHANT', 'PAYER']).nullable(),
  createdAt: isoTime,
  approvedAt: isoTime.nullable(),
  endedAt: isoTime.nullable(),
});
export type SubscriptionView = z.infer<typeof subscriptionView>;

export const subscriptionCreatedView = subscriptionView.extend({
  imageBase64: z.string().nullable().describe('data:image/png;base64,… of qrCode'),
});

export const subscriptionCreatedResponse = z.object({ subscription: subscriptionCreatedView });
export const subscriptionReplayedResponse = z.object({ subscription: subscriptionView, idempotent: z.literal(true) });
export const subscriptionDetailResponse = z.object({
  subscription: subscriptionView.extend({ cycles: z.array(subscriptionCycleView) }),
});
export const subscriptionListResponse = z.object({
  page: z.int(),
  limit: z.int(),
  total: z.int(),
  subscriptions: z.array(subscriptionView),
});

/** What the sandbox's payer can do to a subscription's recorrência (docs/api.md "Sandbox"). */
export const SANDBOX_SUBSCRIPTION_ACTIONS = ['approve', 'refuse', 'cancel', 'fail-debits'] as const;
export type SandboxSubscriptionAction = (typeof SANDBOX_SUBSCRIPTION_ACTIONS)[number];

export const sandboxSubscriptionBody = z
  .object({
    reason: text({ min: 1, max: 140 }).optional().describe('refuse, cancel: the payer’s reason'),
    times: z.int().min(1).max(10).optional().describe('fail-debits: how many of the next debits fail (default 1)'),
  })
  .default({});
export type SandboxSubscriptionBody = z.infer<typeof sandboxSubscriptionBody>;

export const sandboxSubscriptionResponse = z.object({ message: z.string(), subscription: subscriptionView });
