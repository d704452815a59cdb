/**
 * The inbox's state machine on its own (src/services/inbox/callback-inbox.ts), with handlers registered
 * as a feature would register its own: RECEIVED → APPLIED, waits with backoff, parking (at once on
 * a permanent error, or after the attempt budget) with one operator alert, re-drive, and kinds
 * without a handler left alone.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createLogger } from '../../src/lib/logger';
import { CLI_ACTOR } from '../../src/services/platform/audit';
import {
  createCallbackInbox,
  PermanentCallbackError,
  type CallbackHandler,
  type HandlerOutcome,
} from '../../src/services/inbox/callback-inbox';
import { getTestDb } from '../support/db';
import { AcquirerCallback } from '../../src/models/acquirer-callback';

const silent = createLogger({ level: 'silent' });

describe('callback inbox (state machine)', () => {
  const id = () => crypto.randomBytes(8).toString('hex');

  it('applies what its handler applies, once, however often it arrives', async () => {
    const { knex } = await getTestDb();
    let calls = 0;
    const handler: CallbackHandler = async () => {
      calls++;
      return { kind: 'applied', resolution: 'done' };
    };
    const inbox = createCallbackInbox({ knex, logger: silent, handlers: { transfers: handler } });
    const ext = id();
    await Promise.all([1, 2, 3].map(() => inbox.receive('transfers', ext, { n: 1 })));
    await inbox.receive('transfers', ext, { n: 2 });
    const row = await knex('acquirer_callbacks').where({ kind: 'transfers', external_id: ext }).first();
    assert.equal(row.status, 'APPLIED');
    assert.equal(row.resolution, 'done');
    assert.deepEqual(row.payload, { n: 1 });
    assert.equal(calls, 1);
  });

  it('waits with backoff, parks after the attempt budget with one alert, and is re-driven to APPLIED', async () => {
    const { knex } = await getTestDb();
    let outcome: HandlerOutcome = { kind: 'wait', reason: 'not yet' };
    const inbox = createCallbackInbox({
      knex,
      logger: silent,
      handlers: { infractions: async () => outcome },
      options: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const ext = id();
    await inbox.receive('infractions', ext, {});
    const row = () => knex('acquirer_callbacks').where({ kind: 'infractions', external_id: ext }).first();
    assert.equal((await row()).attempts, 1);
    assert.equal((await row()).last_error, 'not yet');
    // What each reconciliation pass does with it (dispatched directly: a sweep would also take
    // other suites' callbacks of this kind from the shared database).
    for (let i = 0; i < 50 && (await row()).status === 'RECEIVED'; i++) {
      await inbox.dispatch(
        await AcquirerCallback.query(knex).findOne({ kind: 'infractions', external_id: ext }).throwIfNotFound(),
      );
    }
    const parked = await row();
    assert.equal(parked.status, 'PARKED');
    assert.equal(parked.attempts, 3);
    assert.match(parked.last_error, /not applied after 3 attempts: not yet/);
    const alerts = await knex('audit_log').where({ action: 'callback.parked', target_id: parked.id });
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0].actor_email, 'system');
    assert.ok((await inbox.list({ status: 'PARKED', kind: 'infractions' })).some((c) => c.id === parked.id));

    // The cause is fixed; an operator re-drives it.
    outcome = { kind: 'applied', resolution: 'fixed' };
    const redriven = await inbox.redrive(CLI_ACTOR, [parked.id]);
    assert.equal(redriven[0]?.status, 'RECEIVED');
    assert.equal(redriven[0]?.attempts, 0);
    await inbox.dispatch(await AcquirerCallback.query(knex).findById(parked.id).throwIfNotFound());
    assert.equal((await row()).status, 'APPLIED');
    assert.equal((await knex('audit_log').where({ action: 'callback.redrive', target_id: parked.id })).length, 1);
  });

  it('parks at once on a permanent error; leaves kinds without a handler RECEIVED and untouched', async () => {
    const { knex } = await getTestDb();
    const inbox = createCallbackInbox({
      knex,
      logger: silent,
      handlers: {
        'pix-keys': async () => {
          throw new PermanentCallbackError('key unknown for good');
        },
      },
    });
    const ext = id();
    await inbox.receive('pix-keys', ext, {});
    const parked = await knex('acquirer_callbacks').where({ kind: 'pix-keys', external_id: ext }).first();
    assert.equal(parked.status, 'PARKED');
    assert.equal(parked.last_error, 'key unknown for good');

    const other = id();
    await inbox.receive('transfers', other, {});
    await inbox.dispatch(
      await AcquirerCallback.query(knex).findOne({ kind: 'transfers', external_id: other }).throwIfNotFound(),
    );
    const kept = await knex('acquirer_callbacks').where({ kind: 'transfers', external_id: other }).first();
    assert.equal(kept.status, 'RECEIVED');
    assert.equal(kept.attempts, 0);
  });
});
