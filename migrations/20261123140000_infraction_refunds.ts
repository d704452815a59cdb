/**
 * MED infractions (README "MED infractions"):
 * - `acquirer_status`: the furthest status the acquirer has announced (OPEN → ACCEPTED | REJECTED →
 *   REFUNDED), kept by the callback handler, so a restarted workflow knows the decision even if the
 *   signal that carried it was lost;
 * - `refund_id` / `refund_amount`: the devolução that returns an accepted infraction's blocked funds,
 *   chosen once (its id is fixed before the acquirer is asked, so a retry asks for the same one);
 * - `closed_at`: the infraction's workflow has nothing left to do (rejected, refunded, or accepted
 *   with nothing to return); the reconciler restarts the workflow of every other OPEN or ACCEPTED one.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('infractions', (t) => {
    t.text('acquirer_status').notNullable().defaultTo('OPEN');
    t.text('refund_id');
    t.bigInteger('refund_amount');
    t.timestamp('closed_at', { useTz: true });
  });
  await knex.raw(`alter table infractions
    add constraint infractions_acquirer_status_check check (acquirer_status in ('OPEN','ACCEPTED','REJECTED','REFUNDED')),
    add constraint infractions_refund_amount_check check (refund_amount is null or refund_amount between 1 and amount)`);
  await knex.raw(`create index infractions_unclosed_idx on infractions (created_at) where closed_at is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists infractions_unclosed_idx');
  await knex.raw(`alter table infractions
    drop constraint if exists infractions_refund_amount_check,
    drop constraint if exists infractions_acquirer_status_check`);
  await knex.schema.alterTable('infractions', (t) => {
    t.dropColumn('closed_at');
    t.dropColumn('refund_amount');
    t.dropColumn('refund_id');
    t.dropColumn('acquirer_status');
  });
}
