/**
 * Callbacks from the acquirer (protocol: src/acquirer/README.md), authenticated by HMAC-SHA256
 * of the raw body; anything unsigned or badly signed is 401. Each callback is kept in the
 * `acquirer_callbacks` inbox (duplicates collapse on (kind, external id)) and handed to its
 * workflow by signal-with-start. Signals are sent even for a duplicate: if an earlier attempt
 * stored the callback but could not signal, the PSP's retry must still get through, and the
 * workflow ignores what it has already applied.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import { newId } from '../../lib/ids';
import { unauthenticated } from '../../lib/errors';
import { CALLBACK_SIGNATURE_HEADER, verifyCallback } from '../../acquirer/callback-signature';
import { wireToCents } from '../../acquirer/money-wire';
import { ChargeRefund } from '../../models/charge-refund';
import { Charge } from '../../models/charge';
import type { ChargeWorkflows } from '../../temporal/charge-workflow-client';
import type { AppContext, RouteModule } from '../types';
import { validate } from '../validation';

const wireAmount = z.string().refine((v) => wireToCents(v) !== null, { message: 'must be a decimal amount like 12.34' });
const pixCallback = z.object({
  pix: z
    .array(
      z.object({
        endToEndId: z.string().min(1).max(64),
        txid: z.string().min(1).max(35).optional(),
        valor: wireAmount,
        horario: z.string().min(1).max(64),
        pagador: z.object({ nome: z.string().max(200), cpf: z.string().optional(), cnpj: z.string().optional() }).optional(),
        devolucoes: z
          .array(z.object({ id: z.string().min(1).max(64), rtrId: z.string().optional(), valor: wireAmount, status: z.string(), motivo: z.string().optional() }))
          .optional(),
      }),
    )
    .min(1)
    .max(1000),
});
const genericCallback = z.record(z.string(), z.unknown());

export interface CallbackDeps {
  knex: Knex;
  secret: string;
  workflows: ChargeWorkflows;
}

/** Our refund ids are `rf_<ulid>`; at the acquirer (BCB ids are alphanumeric) `rf<ulid>`. */
const internalRefundId = (acquirerId: string): string => `rf_${acquirerId.replace(/^rf/, '')}`;

export function acquirerCallbackRoutes(deps: CallbackDeps): RouteModule {
  const { knex, workflows } = deps;

  const verified = (ctx: AppContext): void => {
    // The exact bytes received (kept by the JSON body middleware), never re-serialised JSON.
    const raw: unknown = ctx.request.rawBody;
    if (typeof raw !== 'string' || !verifyCallback(deps.secret, raw, ctx.get(CALLBACK_SIGNATURE_HEADER))) {
      throw unauthenticated('Invalid callback signature');
    }
  };

  const store = async (kind: string, externalId: string, payload: unknown): Promise<void> => {
    await knex('acquirer_callbacks')
      .insert({ id: newId('acb'), kind, external_id: externalId, payload: JSON.stringify(payload) })
      .onConflict(['kind', 'external_id'])
      .ignore();
  };

  return (router) => {
    router.post('/v1/acquirer/pix', async (ctx) => {
      verified(ctx);
      const { pix } = validate(pixCallback, ctx.request.body, 'Callback');
      for (const p of pix) {
        if (p.devolucoes?.length) {
          for (const d of p.devolucoes) {
            if (d.status !== 'DEVOLVIDO' && d.status !== 'NAO_REALIZADO') continue;
            await store('refund', `${d.id}:${d.status}`, d);
            const refund = await ChargeRefund.query(knex).findById(internalRefundId(d.id));
            if (!refund) continue;
            await workflows.refundSettled({ id: refund.chargeId, merchantId: refund.merchantId }, {
              refundId: refund.id,
              outcome: d.status === 'DEVOLVIDO' ? 'CONFIRMED' : 'FAILED',
              reason: d.motivo,
            });
          }
          continue;
        }
        await store('pix', p.endToEndId, p);
        const charge = p.txid ? await Charge.query(knex).findOne({ txid: p.txid }) : undefined;
        if (!charge) {
          ctx.state.log.warn({ txid: p.txid, e2eId: p.endToEndId }, 'payment for an unknown txid: kept in the inbox');
          continue;
        }
        const document = p.pagador?.cpf ?? p.pagador?.cnpj;
        await workflows.paymentReceived({ id: charge.id, merchantId: charge.merchantId }, {
          endToEndId: p.endToEndId,
          txid: charge.txid as string,
          amount: wireToCents(p.valor) as number,
          paidAt: p.horario,
          payer: p.pagador && document ? { name: p.pagador.nome, document } : null,
        });
      }
      ctx.status = 200;
      ctx.body = { message: 'ok' };
    });

    // Laid out for the withdrawal, infraction and PIX key features: verified and kept in the inbox.
    for (const kind of ['transfers', 'infractions', 'pix-keys'] as const) {
      router.post(`/v1/acquirer/${kind}`, async (ctx) => {
        verified(ctx);
        const payload = validate(genericCallback, ctx.request.body, 'Callback');
        await store(kind, newId('ext'), payload);
        ctx.status = 202;
        ctx.body = { message: 'accepted' };
      });
    }
  };
}
