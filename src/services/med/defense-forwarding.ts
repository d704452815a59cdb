/**
 * A merchant's defense on its way to the acquirer (docs/api.md "Infractions"), the workflow side:
 * the `infraction-<id>` workflow's activity reads the stored defense row — never anything a signal
 * carried — and sends it with the defense id as the idempotency key, so a retried call after a lost
 * answer is the same defense at the acquirer, never a second one. Accepted: DEFENDED. Refused for
 * good, or the acquirer's analysis came first: REFUSED with the reason. Any other failure is
 * thrown, for the activity's retry policy and then the workflow's next try.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../lib/logger';
import type { Acquirer } from '../../acquirer/types';
import { AcquirerError } from '../../acquirer/errors';
import { infractionsStore } from '../../stores/infractions';
import { infractionDefensesStore } from '../../stores/infraction-defenses';

export type DefenseForwardOutcome = 'none' | 'forwarded' | 'refused';

export function createDefenseForwarding(deps: { knex: Knex; acquirer: Acquirer; logger: Logger }) {
  const { knex, acquirer, logger } = deps;
  const defenses = infractionDefensesStore(knex);

  async function refuse(defenseId: string, infractionId: string, reason: string): Promise<DefenseForwardOutcome> {
    if (await defenses.markRefused(defenseId, reason))
      logger.warn({ infractionId, defenseId, reason }, 'MED defense not taken by the acquirer');
    return 'refused';
  }

  /** Sends the infraction's PENDING defense, if it has one; idempotent. */
  async function forward(infractionId: string): Promise<DefenseForwardOutcome> {
    const inf = await infractionsStore(knex).find(infractionId);
    const d = inf ? await defenses.forInfraction(infractionId) : undefined;
    if (!inf || !d || d.status !== 'PENDING') return 'none';
    if (inf.status !== 'OPEN' || inf.acquirerStatus !== 'OPEN')
      return refuse(d.id, inf.id, `the acquirer's analysis came first (${inf.acquirerStatus})`);
    const files = await defenses.filesWithContent(d.id);
    try {
      const sent = await acquirer.submitInfractionDefense(inf.acquirerInfractionId, d.id, {
        text: d.defense,
        files: files.map((f) => ({ name: f.name, mimeType: f.mime_type, content: f.content })),
      });
      await defenses.markDefended(d.id, sent.defenseId);
      logger.info({ infractionId, defenseId: d.id, files: files.length }, 'MED defense forwarded to the acquirer');
      return 'forwarded';
    } catch (err) {
      // Refused by the acquirer itself (e.g. its analysis closed meanwhile); other failures (our
      // credentials, an off-protocol answer) are not the defense's: thrown, and tried again.
      if (err instanceof AcquirerError && (err.code === 'REJECTED' || err.code === 'NOT_FOUND'))
        return refuse(d.id, inf.id, err.problem?.detail ?? `${err.code}: ${err.message}`);
      throw err;
    }
  }

  return { forward };
}

export type DefenseForwarding = ReturnType<typeof createDefenseForwarding>;
