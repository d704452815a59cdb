/**
 * Start-up creates the operator account from ADMIN_EMAIL/ADMIN_PASSWORD when no user has that
 * e-mail (docs/operations.md "The admin API"). An existing user is left untouched: changing ADMIN_PASSWORD later
 * does not silently reset a password someone may have changed.
 */
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { newId } from '../../lib/ids';
import { merchantsStore } from '../../stores/merchants';
import { hashPassword } from './auth';

export type BootstrapResult = 'created' | 'exists' | 'not-configured';

export async function ensureAdmin(
  knex: Knex,
  config: Pick<Config, 'ADMIN_EMAIL' | 'ADMIN_PASSWORD'>,
): Promise<BootstrapResult> {
  if (!config.ADMIN_EMAIL || !config.ADMIN_PASSWORD) return 'not-configured';
  const email = config.ADMIN_EMAIL.trim().toLowerCase();
  const store = merchantsStore(knex);
  if (await store.findUserByEmail(email)) return 'exists';
  const passwordHash = await hashPassword(config.ADMIN_PASSWORD);
  // ON CONFLICT DO NOTHING: two processes starting together must not fail on the unique e-mail.
  return (await store.insertAdminUnlessExists({ id: newId('usr'), email, passwordHash })) ? 'created' : 'exists';
}
