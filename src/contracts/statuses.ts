/**
 * Every status list of pixflow, defined once: the request schemas, the OpenAPI document, the
 * models and stores, the workflows' types and the ops CLI import them from here.
 */

export const CHARGE_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELED', 'REFUNDED'] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

export const WITHDRAWAL_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED', 'REFUNDED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** A transfer at the acquirer, as its callbacks and GET /transfers/:id say. */
export const TRANSFER_STATUSES = ['PROCESSING', 'COMPLETED', 'REJECTED', 'RETURNED'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const WEBHOOK_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const INFRACTION_STATUSES = ['OPEN', 'ACCEPTED', 'REJECTED', 'REFUNDED'] as const;
export type InfractionStatus = (typeof INFRACTION_STATUSES)[number];

export const PIX_KEY_STATUSES = ['PENDING', 'ACTIVE', 'INACTIVE'] as const;
export type PixKeyStatus = (typeof PIX_KEY_STATUSES)[number];

export const MERCHANT_STATUSES = ['ACTIVE', 'SUSPENDED'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

export const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

export const USER_STATUSES = ['ACTIVE', 'DISABLED'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** A webhook delivery: PENDING while attempts remain, then one of the three final states. */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
