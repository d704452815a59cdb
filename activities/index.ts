/**
 * Every activity the worker registers, built over the services of one process. Activities are thin
 * and idempotent: the rules live in src/services.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
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
  /** Webhook delivery settings (timeouts, retry delays, address rule); defaults of docs/production.md "Configuration" if absent. */
  webhooks?: WebhookDeliverySettings;
}

export type Activities = ChargeActivities &
  WebhookActivities &
  WithdrawalActivities &
  InfractionActivities &
  PixKeyActivities;

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
  return withFailureTypes(activitiesOver(createWorkerServices(deps)));
}

/**
 * Temporal types the failure of a thrown error by its class (`constructor.name`), but our errors
 * carry the type the workflows' retry policies list in `name` (AcquirerError → AcquirerRejectedError
 * or AcquirerUnavailableError, LedgerInvariantError → InvariantViolation, WithdrawalNotFoundError →
 * NotFoundError): without this, no `nonRetryableErrorTypes` entry of those ever matched and a
 * refusal was retried until the schedule-to-close ran out. The failure stays retryable unless its
 * type is listed; message, stack and cause are kept.
 */
function withFailureTypes<T extends object>(activities: T): T {
  const typed: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(activities as Record<string, (...args: unknown[]) => Promise<unknown>>)) {
    typed[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (!(err instanceof Error) || err instanceof TemporalFailure || err.name === err.constructor.name) throw err;
        const failure = ApplicationFailure.create({
          type: err.name,
          message: err.message,
          nonRetryable: false,
          ...(err.cause instanceof Error ? { cause: err.cause } : {}),
        });
        failure.stack = err.stack;
        throw failure;
      }
    };
  }
  return typed as T;
}
