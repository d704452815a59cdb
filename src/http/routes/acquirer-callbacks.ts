/**
 * Callbacks from the acquirer (protocol: src/acquirer/README.md "Callbacks"), authenticated by
 * HMAC-SHA256 of the raw body: anything unsigned or badly signed is 401, before the body is even
 * parsed. Bodies are checked with the protocol's own schemas (src/acquirer/wire.ts, the same the
 * simulator and the client use); what to do with them is src/services/charge-callbacks.ts.
 */
import type { z } from 'zod';
import { unauthenticated } from '../../lib/errors';
import { CALLBACK_SIGNATURE_HEADER, verifyCallback } from '../../acquirer/callback-signature';
import { infractionCallback, pixCallback, pixKeyCallback, transferCallback } from '../../acquirer/wire';
import type { AcquirerCallbacks } from '../../services/charge-callbacks';
import type { AppContext, RouteModule } from '../types';
import { validate } from '../validation';

export function acquirerCallbackRoutes(deps: { secret: string; callbacks: AcquirerCallbacks }): RouteModule {
  const { callbacks } = deps;

  /** The verified, parsed body: the signature covers the exact bytes received, never re-serialised JSON. */
  const signedBody = <S extends z.ZodType>(ctx: AppContext, schema: S): z.output<S> => {
    const raw: unknown = ctx.request.rawBody;
    if (typeof raw !== 'string' || !verifyCallback(deps.secret, raw, ctx.get(CALLBACK_SIGNATURE_HEADER))) {
      throw unauthenticated('Invalid callback signature');
    }
    return validate(schema, ctx.request.body, 'Callback');
  };

  return (router) => {
    router.post('/v1/acquirer/pix', async (ctx) => {
      await callbacks.pix(signedBody(ctx, pixCallback));
      ctx.status = 200;
      ctx.body = { message: 'ok' };
    });

    // Laid out for the withdrawal, infraction and PIX key features: verified, kept, 202.
    router.post('/v1/acquirer/transfers', async (ctx) => {
      await callbacks.transfer(signedBody(ctx, transferCallback));
      ctx.status = 202;
      ctx.body = { message: 'accepted' };
    });
    router.post('/v1/acquirer/infractions', async (ctx) => {
      await callbacks.infraction(signedBody(ctx, infractionCallback));
      ctx.status = 202;
      ctx.body = { message: 'accepted' };
    });
    router.post('/v1/acquirer/pix-keys', async (ctx) => {
      await callbacks.pixKey(signedBody(ctx, pixKeyCallback));
      ctx.status = 202;
      ctx.body = { message: 'accepted' };
    });
  };
}
