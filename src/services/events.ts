/**
 * Domain events (`charge.paid`, `charge.refunded`, …): recorded once per reference in the same
 * transaction as the change they announce, so an event exists exactly when its change committed.
 * Delivery to merchants' webhooks reads them from here.
 */
import type { Knex } from 'knex';
import { newId } from '../lib/ids';

export interface RecordEventInput {
  merchantId: string;
  type: string;
  data: Record<string, unknown>;
  /** Idempotency reference, e.g. `charge.paid:ch_x`. */
  reference: string;
}

/** Returns the event id, new or existing. */
export async function recordEvent(trx: Knex | Knex.Transaction, e: RecordEventInput): Promise<{ id: string; created: boolean }> {
  const id = newId('evt');
  const inserted = (await trx('events')
    .insert({ id, merchant_id: e.merchantId, type: e.type, data: JSON.stringify(e.data), reference: e.reference })
    .onConflict('reference')
    .ignore()
    .returning('id')) as Array<{ id: string }>;
  if (inserted.length > 0) return { id, created: true };
  const existing = (await trx('events').where({ reference: e.reference }).first('id')) as { id: string };
  return { id: existing.id, created: false };
}
