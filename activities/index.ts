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
import { createInfractionLifecycle } from '../src/services/infraction-lifecycle';
import { createInfractionActivities, type InfractionActivities } from './infractions';
import { createPixKeyRegistration } from '../src/services/pix-keys';
import { createPixKeyActivities, type PixKeyActivities } from './pix-keys';

export interface ActivityDeps {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  /** Webhook delivery settings (timeouts, retry delays, address rule); README defaults if absent. */
  webhooks?: WebhookDeliverySettings;
}

export type Activities = ChargeActivities & WebhookActivities & WithdrawalActivities & InfractionActivities & PixKeyActivities;

export function createActivities(deps: ActivityDeps): Activities {
  return {
    ...createChargeActivities(createChargeLifecycle(deps)),
    ...createWebhookActivities(createWebhookDelivery({ knex: deps.knex, logger: deps.logger, settings: deps.webhooks })),
    ...createWithdrawalActivities(createWithdrawalLifecycle(deps)),
    ...createInfractionActivities(createInfractionLifecycle(deps)),
    ...createPixKeyActivities(createPixKeyRegistration(deps)),
  };
}
