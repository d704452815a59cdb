/**
 * What the acquirer tells us (protocol: src/acquirer/README.md "Callbacks"), after the route has
 * verified the HMAC and parsed the body with the protocol's own schemas (src/acquirer/wire.ts).
 *
 * Every callback is first kept in the `acquirer_callbacks` inbox, keyed on the body's own ids
 * (endToEndId; devolução id + status; transfer, infraction or key id + status), so a PSP retry or a
 * duplicate delivery collapses on the unique (kind, external_id). Payments and refund outcomes are
 * then handed to the charge's workflow by signal-with-start. The signal is sent for a duplicate too:
 * if an earlier delivery was stored but could not signal (Temporal down), the PSP's retry must still
 * get through; the workflow's activities ignore what they have already applied.
 */
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { newId } from '../lib/ids';
import { Charge } from '../models/charge';
import { ChargeRefund } from '../models/charge-refund';
import { wireToCents } from '../acquirer/money-wire';
import type { InfractionCallback, PixCallback, PixKeyCallback, TransferCallback } from '../acquirer/wire';
import type { ChargeWorkflows } from '../temporal/charge-workflow-client';
import { internalRefundId } from './charge-refund-ids';
import type { InfractionCallbacks } from './infraction-callbacks';
import type { PixKeyCallbacks } from './pix-key-callbacks';

export type CallbackKind = 'pix' | 'refund' | 'transfers' | 'infractions' | 'pix-keys';

export function createAcquirerCallbacks(deps: {
  knex: Knex;
  workflows: ChargeWorkflows;
  logger: Logger;
  /** MED infractions (src/services/infraction-callbacks.ts); without it they are only kept. */
  infractions?: InfractionCallbacks;
  /** PIX key status (src/services/pix-key-callbacks.ts); without it they are only kept. */
  pixKeys?: PixKeyCallbacks;
}) {
  const { knex, workflows, logger } = deps;

  /** Keeps the callback once per (kind, externalId); true when this delivery was the first. */
  async function keep(kind: CallbackKind, externalId: string, payload: unknown): Promise<boolean> {
    const rows = (await knex('acquirer_callbacks')
      .insert({ id: newId('acb'), kind, external_id: externalId, payload: JSON.stringify(payload) })
      .onConflict(['kind', 'external_id'])
      .ignore()
      .returning('id')) as Array<{ id: string }>;
    return rows.length > 0;
  }

  /** `/v1/acquirer/pix`: an item without `devolucoes` is a payment, with them a refund outcome. */
  async function pix(body: PixCallback): Promise<void> {
    for (const p of body.pix) {
      if (p.devolucoes?.length) {
        for (const d of p.devolucoes) {
          // EM_PROCESSAMENTO is not an outcome: the workflow waits (or polls) for the final one.
          if (d.status !== 'DEVOLVIDO' && d.status !== 'NAO_REALIZADO') continue;
          await keep('refund', `${d.id}:${d.status}`, d);
          const refund = await ChargeRefund.query(knex).findById(internalRefundId(d.id));
          if (!refund) {
            logger.warn({ refundId: d.id, e2eId: p.endToEndId }, 'refund outcome for an unknown devolução: kept in the inbox');
            continue;
          }
          await workflows.refundSettled(
            { id: refund.chargeId, merchantId: refund.merchantId },
            { refundId: refund.id, outcome: d.status === 'DEVOLVIDO' ? 'CONFIRMED' : 'FAILED', reason: d.motivo },
          );
        }
        continue;
      }
      await keep('pix', p.endToEndId, p);
      const charge = p.txid ? await Charge.query(knex).findOne({ txid: p.txid }) : undefined;
      if (!charge?.txid) {
        // A pix to the key without a cob of ours (or an unknown txid): nothing to pay; an operator
        // reads it from the inbox.
        logger.warn({ txid: p.txid, e2eId: p.endToEndId }, 'payment for an unknown txid: kept in the inbox');
        continue;
      }
      const document = p.pagador?.cpf ?? p.pagador?.cnpj;
      await workflows.paymentReceived(
        { id: charge.id, merchantId: charge.merchantId },
        {
          endToEndId: p.endToEndId,
          txid: charge.txid,
          // The schema admitted only `\d{1,10}\.\d{2}`, which always converts.
          amount: wireToCents(p.valor) ?? 0,
          paidAt: p.horario,
          payer: p.pagador && document ? { name: p.pagador.nome, document } : null,
        },
      );
    }
  }

  // Laid out for the withdrawal feature: kept in the inbox, once per (id, status), until its
  // workflow exists to take it.
  const transfer = (b: TransferCallback) => keep('transfers', `${b.transfer.id}:${b.transfer.status}`, b);
  // Kept once per (id, status), then handed on every delivery (the handlers are idempotent).
  const infraction = async (b: InfractionCallback) => {
    await keep('infractions', `${b.infraction.id}:${b.infraction.status}`, b);
    await deps.infractions?.received(b);
  };
  const pixKey = async (b: PixKeyCallback) => {
    await keep('pix-keys', `${b.pixKey.id}:${b.pixKey.status}`, b);
    await deps.pixKeys?.statusChanged(b);
  };

  return { pix, transfer, infraction, pixKey };
}

export type AcquirerCallbacks = ReturnType<typeof createAcquirerCallbacks>;
