/**
 * The retry policies the workflows share, each declared once; a workflow adds the error types that
 * are final for its activities. Constants only: this module is bundled into Temporal's sandbox.
 * Every activity is idempotent (guarded updates, ledger and event references, acquirer ids), so a
 * retry after an attempt that did commit changes nothing.
 */

/** Database steps: from 0.5 s doubling up to every 30 s, since PostgreSQL comes back quickly. */
export const DB_RETRY = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
} as const;

/** Acquirer calls: from 1 s doubling up to every 5 minutes, since the acquirer may be down for a while. */
export const ACQUIRER_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '5 minutes',
} as const;
