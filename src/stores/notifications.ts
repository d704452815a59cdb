/** Every query on `notifications`: the merchant's notification records, one per reference. */
import type { Db } from '../db/types';
import { newId } from '../lib/ids';

export interface NewNotification {
  merchantId: string;
  kind: string;
  /** Unique: a retried step records nothing the second time. */
  reference: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
}

export function notificationsStore(db: Db) {
  return {
    async insertOnce(n: NewNotification): Promise<void> {
      await db('notifications')
        .insert({
          id: newId('ntf'),
          merchant_id: n.merchantId,
          kind: n.kind,
          title: n.title,
          body: n.body,
          data: JSON.stringify(n.data),
          reference: n.reference,
        })
        .onConflict('reference')
        .ignore();
    },
  };
}
