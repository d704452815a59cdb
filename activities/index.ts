/**
 * Every activity the worker registers, built over the services of one process. Activities are thin
 * and idempotent: the rules live in src/services.
 */
import type { Knex } from 'knex';
import type { Logger } from '../src/lib/logger';
import type { Acquirer } from '../src/acquirer/types';
import { createChargeLifecycle } from '../src/services/charge-lifecycle';
import { createChargeActivities, type ChargeActivities } from './charges';
import { createWebhookDelivery, type WebhookDeliverySettings } from '../src/services/webhook-delivery';
import { createWebhookActivities, type WebhookActivities } from './webhooks';
import { createWithdrawalLifecycle } from '../src/services/withdrawal-lifecycle';
import { createWithdrawalActivities, type WithdrawalActivities } from './withdrawals';

export interface ActivityDeps {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  /** Webhook delivery settings (timeouts, retry delays, address rule); README defaults if absent. */
  webhooks?: WebhookDeliverySettings;
}

export type Activities = ChargeActivities & WebhookActivities & WithdrawalActivities;

export function createActivities(deps: ActivityDeps): Activities {
  return {
    ...createChargeActivities(createChargeLifecycle(deps)),
    ...createWebhookActivities(createWebhookDelivery({ knex: deps.knex, logger: deps.logger, settings: deps.webhooks })),
    ...createWithdrawalActivities(createWithdrawalLifecycle(deps)),
  };
}
