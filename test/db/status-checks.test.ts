/**
 * The status lists of src/contracts/statuses.ts and the CHECK constraints of the migrations say
 * the same thing. Released migrations keep their lists as literals (a migration must not change
 * when the code does), so this test is what keeps the two from drifting apart.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import {
  CALLBACK_STATUSES,
  CHARGE_STATUSES,
  DEFENSE_STATUSES,
  INFRACTION_STATUSES,
  KYC_STATUSES,
  MERCHANT_STATUSES,
  PIX_KEY_STATUSES,
  REFUND_KINDS,
  REFUND_STATUSES,
  USER_ROLES,
  USER_STATUSES,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_STATUSES,
  WITHDRAWAL_STATUSES,
} from '../../src/contracts/statuses';
import { getTestDb } from '../support/db';

const CHECKS: Array<[constraint: string, values: readonly string[]]> = [
  ['charges_status_check', CHARGE_STATUSES],
  ['withdrawals_status_check', WITHDRAWAL_STATUSES],
  ['webhooks_status_check', WEBHOOK_STATUSES],
  ['webhook_deliveries_status_check', WEBHOOK_DELIVERY_STATUSES],
  ['infractions_status_check', INFRACTION_STATUSES],
  ['infractions_acquirer_status_check', INFRACTION_STATUSES],
  ['pix_keys_status_check', PIX_KEY_STATUSES],
  ['merchants_status_check', MERCHANT_STATUSES],
  ['merchants_kyc_check', KYC_STATUSES],
  ['users_status_check', USER_STATUSES],
  ['users_role_check', USER_ROLES],
  ['charge_refunds_status_check', REFUND_STATUSES],
  ['charge_refunds_kind_check', REFUND_KINDS],
  ['acquirer_callbacks_status_check', CALLBACK_STATUSES],
  ['infraction_defenses_status_check', DEFENSE_STATUSES],
];

describe('status CHECK constraints', () => {
  let knex: Knex;
  before(async () => {
    ({ knex } = await getTestDb());
  });

  for (const [constraint, values] of CHECKS) {
    it(`${constraint} allows exactly the statuses of src/contracts/statuses.ts`, async () => {
      const row = (await knex('pg_constraint')
        .where({ conname: constraint, contype: 'c' })
        .first(knex.raw('pg_get_constraintdef(oid) as def'))) as { def: string } | undefined;
      assert.ok(row, `${constraint} exists`);
      const allowed = [...row.def.matchAll(/'([A-Z_]+)'::text/g)].map((m) => m[1]).sort();
      assert.deepEqual(allowed, [...values].sort());
    });
  }
});
