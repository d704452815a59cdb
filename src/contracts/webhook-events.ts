/**
 * The catalogue of webhook events (docs/api.md "Webhooks"): what a merchant can subscribe to, with the
 * category and Portuguese description that GET /v1/webhooks/merchant/events shows.
 */
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
];
