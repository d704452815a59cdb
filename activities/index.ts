/**
 * Every activity the worker registers, built over the services of one process. Activities are thin
 * and idempotent: the rules live in src/services.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import type { ChargeLifecycle } from '../src/services/charges/lifecycle';
import type { WebhookDelivery } from '../src/services/webhooks/delivery';
import type { WithdrawalLifecycle } from '../src/services/withdrawals/lifecycle';
import type { InfractionLifecycle } from '../src/services/med/lifecycle';
import type { PixKeyRegistration } from '../src/services/pix-keys/pix-keys';
import type { SubscriptionLifecycle } from '../src/services/subscriptions/lifecycle';
import { createChargeActivities, type ChargeActivities } from './charges';
import { createWebhookActivities, type WebhookActivities } from './webhooks';
import { createWithdrawalActivities, type WithdrawalActivities } from './withdrawals';
import { createInfractionActivities, type InfractionActivities } from './infractions';
import { createPixKeyActivities, type PixKeyActivities } from './pix-keys';
import { createSubscriptionActivities, type SubscriptionActivities } from './subscriptions';

/** The services the activities wrap (built by src/runtime/composition.ts `createWorkerServices`). */
export interface ActivityServices {
  chargeLifecycle: ChargeLifecycle;
  webhookDelivery: WebhookDelivery;
  withdrawalLifecycle: WithdrawalLifecycle;
  infractionLifecycle: InfractionLifecycle;
  pixKeyRegistration: PixKeyRegistration;
  subscriptionLifecycle: SubscriptionLifecycle;
}

export type Activities = ChargeActivities &
  WebhookActivities &
  WithdrawalActivities &
  InfractionActivities &
  PixKeyActivities &
  SubscriptionActivities;

/** The activities over the worker's services (src/runtime/composition.ts `createActivities`). */
export function activitiesOver(services: ActivityServices): Activities {
  return withFailureTypes({
    ...createChargeActivities(services.chargeLifecycle),
    ...createWebhookActivities(services.webhookDelivery),
    ...createWithdrawalActivities(services.withdrawalLifecycle),
    ...createInfractionActivities(services.infractionLifecycle),
    ...createPixKeyActivities(services.pixKeyRegistration),
    ...createSubscriptionActivities(services.subscriptionLifecycle),
  });
}

/**
 * Temporal types a failure by its class name, but the retry policies list our errors' `name`
 * (AcquirerRejectedError, InvariantViolation, NotFoundError): this sets the failure's type to it,
 * else no `nonRetryableErrorTypes` entry would ever match.
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
