/**
 * Plain types shared by the subscription workflow, its activities and the code that signals it
 * (docs/api.md "Subscriptions"). Pure types only: this file enters the workflow bundle.
 */
import type { SubscriptionStatus } from '../src/contracts/statuses';
import type { PaymentNotice } from './charge-types';

export interface SubscriptionWorkflowInput {
  subscriptionId: string;
  /** The cycle this run handles; absent on the first run, which waits for the payer's approval. */
  cycle?: number;
}

/** The next cycle as the subscription plans it, or null when none is due (ended, past endDate). */
export interface CyclePlan {
  number: number;
  /** YYYY-MM-DD: the debit date. */
  dueDate: string;
  /** A fixed subscription's amount; a variable one's maxAmount (its bound: the amount charged is the one set for the cycle). */
  amount: number;
  /** Retries the rec's policy allows after the first attempt (0 or 3), within `retryWindowDays`. */
  retries: number;
  retryWindowDays: number;
}

/** A cycle opened (its charge and cobr), or skipped: a variable cycle with no amount set (docs/api.md "Variable amounts"). */
export type OpenedCycle = { chargeId: string; txid: string } | { skipped: true };

/** A cycle's cobr as the acquirer reports it (GET /cobr/{txid}), read by an activity. */
export type CycleCheck =
  | { kind: 'paid'; notice: PaymentNotice }
  /** The last of `attempts` was rejected; `retryDate` is the next one the policy allows, or null. */
  | { kind: 'attempt_failed'; attempts: number; reason: string; retryDate: string | null }
  /** The cobr is rejected or cancelled for good at the acquirer. */
  | { kind: 'closed'; reason: string }
  /** An attempt is scheduled and not yet played. */
  | { kind: 'waiting' };

export interface SubscriptionOutcome {
  status: SubscriptionStatus;
  /** Cycles this subscription charged before it ended. */
  lastCycle: number;
}
