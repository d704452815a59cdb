/**
 * The catalogue of webhook events (docs/api.md "Webhooks"): what a merchant can subscribe to, with the
 * category and Portuguese description that GET /v1/webhooks/merchant/events shows, and the payload
 * each one delivers (the `webhooks` object of the OpenAPI document is generated from these, and
 * recordEvent only accepts data of this shape).
 */
import { z } from 'zod';
import { PIX_KEY_TYPES } from '../pix/pix-key';
import { INFRACTION_STATUSES } from './statuses';

export const WEBHOOK_EVENT_TYPES = [
  'charge.paid',
  'charge.refunded',
  'withdraw.completed',
  'withdraw.failed',
  'withdraw.refunded',
  'pixkey.updated',
  'infraction.received',
  'infraction.updated',
  'infraction.refund_completed',
  'subscription.approved',
  'subscription.canceled',
  'subscription.charge.paid',
  'subscription.charge.failed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEventEntry {
  event: WebhookEventType;
  description: string;
  category: 'Cobranças' | 'Saques' | 'Chave PIX' | 'Infrações';
}

export const WEBHOOK_EVENT_CATALOGUE: readonly WebhookEventEntry[] = [
  { event: 'charge.paid', category: 'Cobranças', description: 'Pagamento de uma cobrança confirmado pelo banco' },
  { event: 'charge.refunded', category: 'Cobranças', description: 'Cobrança estornada (devolvida) ao pagador' },
  { event: 'withdraw.completed', category: 'Saques', description: 'Saque concluído: transferência efetivada' },
  { event: 'withdraw.failed', category: 'Saques', description: 'Saque recusado pelo banco; o saldo foi restaurado' },
  {
    event: 'withdraw.refunded',
    category: 'Saques',
    description: 'Saque devolvido pelo banco de destino; o saldo foi restaurado',
  },
  {
    event: 'pixkey.updated',
    category: 'Chave PIX',
    description: 'Status da chave PIX alterado (ativação, inativação)',
  },
  { event: 'infraction.received', category: 'Infrações', description: 'Nova infração PIX (MED) recebida' },
  { event: 'infraction.updated', category: 'Infrações', description: 'Status de uma infração PIX (MED) alterado' },
  {
    event: 'infraction.refund_completed',
    category: 'Infrações',
    description: 'Devolução de uma infração PIX (MED) concluída',
  },
  {
    event: 'subscription.approved',
    category: 'Cobranças',
    description: 'Assinatura (Pix Automático) autorizada pelo pagador',
  },
  {
    event: 'subscription.canceled',
    category: 'Cobranças',
    description: 'Assinatura (Pix Automático) cancelada pelo recebedor ou pelo pagador',
  },
  {
    event: 'subscription.charge.paid',
    category: 'Cobranças',
    description: 'Cobrança de um ciclo de assinatura debitada do pagador',
  },
  {
    event: 'subscription.charge.failed',
    category: 'Cobranças',
    description: 'Débito de um ciclo de assinatura não realizado (com ou sem nova tentativa)',
  },
];

const isoTime = z.iso.datetime();
const decimalAmount = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .describe('Decimal with two places (not cents)');

const infractionData = z.object({
  infractionId: z.string(),
  chargeId: z.string().nullable(),
  endToEndId: z.string().nullable(),
  amount: z.int().describe('Cents'),
  reason: z.string(),
  status: z.enum(INFRACTION_STATUSES),
});

/** Each event's `data`, as docs/api.md "Events" lists them. */
export const WEBHOOK_EVENT_DATA = {
  'charge.paid': z.object({
    chargeId: z.string(),
    txid: z.string().nullable(),
    amount: z.int().describe('Cents: the nominal amount'),
    nominalAmount: z.int().optional().describe('Cents: the charge’s amount (as `amount`)'),
    paidAmount: z
      .int()
      .optional()
      .describe('Cents: what the payer paid and the ledger credited (a due-date charge’s amount due that day)'),
    breakdown: z
      .object({
        fine: z.int(),
        interest: z.int(),
        discount: z.int(),
        abatement: z.int(),
      })
      .nullable()
      .optional()
      .describe(
        'A due-date charge’s fine, interest, discount and abatement on the payment date, in cents; null otherwise',
      ),
    paidAt: isoTime,
    payer: z.object({ name: z.string(), document: z.string() }),
  }),
  'charge.refunded': z.object({
    refundId: z.string(),
    txid: z.string().nullable(),
    chargeId: z.string(),
    amount: decimalAmount,
    status: z.literal('closed'),
    reason: z.string(),
    end2endId: z.string().nullable(),
  }),
  'withdraw.completed': z.object({
    withdrawId: z.string(),
    amount: z.int().describe('Cents'),
    status: z.literal('COMPLETED'),
    transferId: z.string(),
    completedAt: isoTime,
  }),
  'withdraw.failed': z.object({
    withdrawId: z.string(),
    amount: z.int().describe('Cents'),
    status: z.literal('FAILED'),
    reason: z.string(),
  }),
  'withdraw.refunded': z.object({
    withdrawId: z.string(),
    amount: z.int().describe('Cents'),
    status: z.literal('REFUNDED'),
    reason: z.string(),
    refundedAt: isoTime,
  }),
  'pixkey.updated': z.object({
    keyId: z.string(),
    key: z.string(),
    type: z.enum(PIX_KEY_TYPES),
    status: z.enum(['PENDENTE', 'ATIVA', 'INATIVA']).describe("The acquirer's (BCB's) word for the status"),
  }),
  'infraction.received': infractionData.extend({ status: z.literal('OPEN') }),
  'infraction.updated': infractionData.extend({ status: z.enum(['ACCEPTED', 'REJECTED']) }),
  'infraction.refund_completed': infractionData.extend({ status: z.literal('REFUNDED'), refundedAt: isoTime }),
  'subscription.approved': z.object({ subscriptionId: z.string(), status: z.literal('ACTIVE'), approvedAt: isoTime }),
  'subscription.canceled': z.object({
    subscriptionId: z.string(),
    status: z.literal('CANCELED'),
    canceledBy: z.enum(['MERCHANT', 'PAYER']),
    canceledAt: isoTime,
  }),
  'subscription.charge.paid': z.object({
    subscriptionId: z.string(),
    cycle: z.int().describe('1 for the first cycle'),
    chargeId: z.string(),
    amount: z.int().describe('Cents'),
    dueDate: z.iso.date(),
    paidAt: isoTime,
  }),
  'subscription.charge.failed': z.object({
    subscriptionId: z.string(),
    cycle: z.int(),
    chargeId: z.string(),
    amount: z.int().describe('Cents'),
    dueDate: z.iso.date(),
    attempt: z.int().describe('1 for the debit on the due date, then each retry'),
    reason: z.string(),
    retryDate: z.iso.date().nullable().describe('When the debit is tried again; null when the cycle failed for good'),
  }),
} as const satisfies Record<WebhookEventType, z.ZodType>;

export type WebhookEventData<E extends WebhookEventType = WebhookEventType> = z.infer<(typeof WEBHOOK_EVENT_DATA)[E]>;

/** The body every delivery POSTs: the envelope of docs/api.md "Events" around the event's data. */
export function webhookEnvelope<E extends WebhookEventType>(event: E) {
  return z.object({
    event: z.literal(event),
    timestamp: isoTime,
    data: WEBHOOK_EVENT_DATA[event],
  });
}
