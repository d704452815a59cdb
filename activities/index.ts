/**
 * Every activity the worker registers, built over the services of one process. Activities are thin
 * and idempotent: the rules live in src/services.
 */
import type { Knex } from 'knex';
import type { Logger } from '../src/lib/logger';
import type { Acquirer } from '../src/acquirer/types';
import { createWorkerServices, type WorkerServices } from '../src/runtime/composition';
import type { WebhookDeliverySettings } from '../src/services/webhook-delivery';
import { createChargeActivities, type ChargeActivities } from './charges';
import { createWebhookActivities, type WebhookActivities } from './webhooks';
import { createWithdrawalActivities, type WithdrawalActivities } from './withdrawals';
import { createInfractionActivities, type InfractionActivities } from './infractions';
import { createPixKeyActivities, type PixKeyActivities } from './pix-keys';

export interface ActivityDeps {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  /** Webhook delivery settings (timeouts, retry delays, address rule); README defaults if absent. */
  webhooks?: WebhookDeliverySettings;
}

export type Activities = ChargeActivities & WebhookActivities & WithdrawalActivities & InfractionActivities & PixKeyActivities;

/** The activities over the worker's services (src/runtime/composition.ts). */
export function activitiesOver(services: WorkerServices): Activities {
  return {
    ...createChargeActivities(services.chargeLifecycle),
    ...createWebhookActivities(services.webhookDelivery),
    ...createWithdrawalActivities(services.withdrawalLifecycle),
    ...createInfractionActivities(services.infractionLifecycle),
    ...createPixKeyActivities(services.pixKeyRegistration),
  };
}

export function createActivities(deps: ActivityDeps): Activities {
  return activitiesOver(createWorkerServices(deps));
}
