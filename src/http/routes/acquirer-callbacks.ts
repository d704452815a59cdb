/**
 * Callbacks from the acquirer (protocol: src/acquirer/README.md "Callbacks"), authenticated by
 * HMAC-SHA256 of the exact bytes received: the body is read raw (the JSON body parser leaves
 * `/v1/acquirer/*` alone), the signature is checked over those bytes — anything unsigned or badly
 * signed is 401 before a single byte is decoded or parsed — and only then is it decoded (strict
 * UTF-8) and parsed with the strict callback schemas (src/acquirer/wire.ts): a bad date or a zero
 * amount is a 400 that changes nothing. What to do with a callback is
 * src/services/inbox/acquirer-callbacks.ts; answering 2xx means it is kept in the inbox for good.
 */
import getRawBody from 'raw-body';
import type { z } from 'zod';
import { invalid, unauthenticated } from '../../lib/errors';
import { CALLBACK_SIGNATURE_HEADER, verifyCallback } from '../../acquirer/callback-signature';
import { infractionCallback, pixCallback, pixKeyCallback, transferCallback } from '../../acquirer/wire';
import { cobRCallback, recCallback, type CobRCallback, type RecCallback } from '../../acquirer/wire';
import type { AcquirerCallbacks } from '../../services/inbox/acquirer-callbacks';
import type { AppContext, RouteModule } from '../types';
import { validate } from '../../contracts/validation';

interface RecurrenceCallbacks {
  rec(body: RecCallback): Promise<void>;
  cobr(body: CobRCallback): Promise<void>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function acquirerCallbackRoutes(deps: {
  secret: string;
  callbacks: AcquirerCallbacks & { recurrences?: RecurrenceCallbacks };
  bodyLimitBytes?: number;
  /** Pix Automático (docs/api.md "Subscriptions"): each says "look again" to its subscription's run. */
  recurrences?: RecurrenceCallbacks;
}): RouteModule {
  const { callbacks } = deps;
  const limit = deps.bodyLimitBytes ?? 1_048_576;

  /** The verified, parsed body: the signature covers the exact bytes received, never re-serialised JSON. */
  const signedBody = async <S extends z.ZodType>(ctx: AppContext, schema: S): Promise<z.output<S>> => {
    // raw-body raises 413 over the limit and 400 on an aborted or mis-sized body (errors middleware).
    const raw = await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
    if (!verifyCallback(deps.secret, raw, ctx.get(CALLBACK_SIGNATURE_HEADER))) {
      throw unauthenticated('Invalid callback signature');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8.decode(raw));
    } catch {
      throw invalid('Malformed JSON body: expected a JSON object', 'malformed_json');
    }
    return validate(schema, parsed, 'Callback');
  };

  /** One signed callback route: verify, parse, hand to the callbacks service, answer. */
  const callbackRoute =
    <S extends z.ZodType>(schema: S, handle: (body: z.output<S>) => Promise<unknown>, status: 200 | 202) =>
    async (ctx: AppContext): Promise<void> => {
      await handle(await signedBody(ctx, schema));
      ctx.status = status;
      ctx.body = { message: status === 200 ? 'ok' : 'accepted' };
    };

  return (router) => {
    router.post('/v1/acquirer/pix', callbackRoute(pixCallback, callbacks.pix, 200));
    // Kept in the inbox and handed to the handler their feature registers: 202.
    router.post('/v1/acquirer/transfers', callbackRoute(transferCallback, callbacks.transfer, 202));
    router.post('/v1/acquirer/infractions', callbackRoute(infractionCallback, callbacks.infraction, 202));
    router.post('/v1/acquirer/pix-keys', callbackRoute(pixKeyCallback, callbacks.pixKey, 202));
    const r = deps.recurrences ?? callbacks.recurrences;
    if (r)
      router.post(
        '/v1/acquirer/rec',
        callbackRoute(recCallback, (b) => r.rec(b), 202),
      );
    if (r)
      router.post(
        '/v1/acquirer/cobr',
        callbackRoute(cobRCallback, (b) => r.cobr(b), 202),
      );
  };
}
