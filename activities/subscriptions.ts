/**
 * Subscription activities: thin adapters from the subscription workflow to its lifecycle service
 * (src/services/subscriptions/lifecycle.ts). Each one is idempotent, so Temporal may retry it freely.
 */
import type { SubscriptionLifecycle } from '../src/services/subscriptions/lifecycle';

type Steps = Omit<SubscriptionLifecycle, never>;
export type SubscriptionActivities = {
  [K in keyof Steps as `subscription${Capitalize<K & string>}`]: Steps[K];
};

/** One line each, by design. */
export function createSubscriptionActivities(l: SubscriptionLifecycle): SubscriptionActivities {
  return {
    subscriptionSyncWithRec: (id) => l.syncWithRec(id),
    subscriptionExpireApproval: (id) => l.expireApproval(id),
    subscriptionPlanCycle: (id, n) => l.planCycle(id, n),
    subscriptionOpenCycle: (id, plan, expiresIn) => l.openCycle(id, plan, expiresIn),
    subscriptionCheckCycle: (id, n) => l.checkCycle(id, n),
    subscriptionRetryCycle: (id, n, date) => l.retryCycle(id, n, date),
    subscriptionRecordCycleFailure: (id, n, f) => l.recordCycleFailure(id, n, f),
    subscriptionBookCycle: (id, n, notice) => l.bookCycle(id, n, notice),
    subscriptionSettleCycle: (chargeId) => l.settleCycle(chargeId),
    subscriptionCloseAtAcquirer: (id) => l.closeAtAcquirer(id),
    subscriptionStatus: (id) => l.status(id),
  };
}
