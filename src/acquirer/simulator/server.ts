/**
 * The acquirer simulator: a small PSP speaking the protocol of src/acquirer/http-client.ts (BCB API
 * Pix paths for cob and devolução, OAuth2 client credentials, transfers and keys in the same
 * style), with its own in-memory state (psp.ts), signed callbacks to the service (callbacks.ts), a
 * control surface for tests and the sandbox (methods in control-surface.ts, HTTP under /_sim in
 * control-routes.ts), and fault injection (protocol.ts). Requests are validated with the same
 * schemas the client uses (wire.ts). This module only wires them: one module per route family
 * (oauth.ts, cob.ts, due-date.ts, devolucao.ts, transfers.ts, defense.ts, recurrence.ts).
 *
 * `npm start` runs it in-process when ACQUIRER_URL is unset. Protocol: src/acquirer/README.md.
 * State is kept in memory for the life of the process: it is a simulator, not a ledger.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { createCallbackSender, type CallbackSender } from './callbacks';
import { cobRoutes } from './cob';
import { controlRoutes } from './control-routes';
import { simulatorControl } from './control-surface';
import { defenseRoutes } from './defense';
import { devolucaoRoutes } from './devolucao';
import { dueDateRoutes } from './due-date';
import { closeServer, listen } from './listen';
import { silentLogger, type SimulatorLogger } from './logger';
import { oauthRoutes } from './oauth';
import { bearerAuth, bodyParser, problemAnswers, protocolRoute, type SimState } from './protocol';
import { SimulatedPsp } from './psp';
import { recurrenceRoutes, simulatedRecurrences, type RecurrenceSimOptions } from './recurrence';
import type { Faults, SimulatorControl } from './control';
import { transferRoutes } from './transfers';

export type { SimCob, SimRefund, SimTransfer, SimKey, SimInfraction, SimDefense } from './psp';
export { SimulatorStateError } from './psp';

export type { SimulatorLogger } from './logger';

export interface SimulatorOptions {
  /** 0 (default): any free port. */
  port?: number;
  host?: string;
  /** Where the service listens; callbacks go to `${callbackBaseUrl}/v1/acquirer/...`. May be set later. */
  callbackBaseUrl?: string;
  /** ACQUIRER_CALLBACK_SECRET: every callback is signed with it. */
  callbackSecret: string;
  clientId?: string;
  clientSecret?: string;
  /** SIMULATOR_TRANSFER_DELAY_MS: transfers complete (and keys activate) after this long. Default 2000. */
  transferDelayMs?: number;
  /** SIMULATOR_AUTO_COMPLETE: false leaves transfers PROCESSING and keys PENDENTE until told. Default true. */
  autoComplete?: boolean;
  /** SIMULATOR_KEY_ACTIVATION_DELAY_MS: a registered key turns ATIVA after this long. Default: transferDelayMs. */
  keyActivationDelayMs?: number;
  logger?: SimulatorLogger;
  /** Lifetime of issued access tokens. Default 3600. */
  tokenTtlSeconds?: number;
  /** Devoluções settle after this long, while auto-settlement is on. Default 10. */
  refundDelayMs?: number;
  /** A scripted analysis answers a defense this long after it arrived. Default 10. */
  defenseAnswerDelayMs?: number;
  /** Callback delivery: attempts (default 6), first backoff (default 200 ms, doubling), per-attempt timeout (5 s). */
  callbackMaxAttempts?: number;
  callbackRetryBaseMs?: number;
  callbackTimeoutMs?: number;
  /**
   * Serve HTTPS with this PEM certificate and key; with `clientCa`, require a client certificate
   * issued by it, as a PSP's API Pix does (docs/production.md "Acquirer mTLS"). Unset: plain HTTP.
   */
  tls?: { cert: Buffer | string; key: Buffer | string; clientCa?: Buffer | string };
  /**
   * Pix Automático: debits are played `debitDelayMs` (default 50) after they are scheduled unless
   * `autoDebit` is false (default: autoComplete); a cobr is accepted `cobrLeadDays` before its date
   * (BCB: 2 to 10). A stack on skipped time lifts the upper bound: its dates are the workflow's.
   */
  recurrence?: RecurrenceSimOptions;
}

export type { Faults, SimCall, SimRoute, SimulatorControl } from './control';

export interface RunningSimulator {
  url: string;
  control: SimulatorControl;
  close(): Promise<void>;
}

/** Signed callbacks to the service, with the faults that duplicate, hold or delay them. */
function callbackSender(opts: SimulatorOptions, state: SimState, logger: SimulatorLogger): CallbackSender {
  const faults = (): Faults => state.faults;
  return createCallbackSender({
    baseUrl: () => state.callbackBaseUrl,
    secret: opts.callbackSecret,
    logger,
    maxAttempts: opts.callbackMaxAttempts,
    retryBaseMs: opts.callbackRetryBaseMs,
    timeoutMs: opts.callbackTimeoutMs,
    duplicate: () => faults().duplicateCallbacks === true,
    hold: () => faults().outOfOrderCallbacks === true,
    jitterMs: () => {
      const ms = faults().outOfOrderCallbacksMs;
      return ms ? Math.floor(Math.random() * ms) : 0;
    },
  });
}

function simulatedPsp(opts: SimulatorOptions, callbacks: CallbackSender): SimulatedPsp {
  return new SimulatedPsp({
    callbacks,
    transferDelayMs: opts.transferDelayMs ?? 2000,
    keyActivationDelayMs: opts.keyActivationDelayMs ?? opts.transferDelayMs ?? 2000,
    autoComplete: opts.autoComplete ?? true,
    refundDelayMs: opts.refundDelayMs ?? 10,
    defenseAnswerDelayMs: opts.defenseAnswerDelayMs ?? 10,
  });
}

interface Parts {
  state: SimState;
  psp: SimulatedPsp;
  recurrences: ReturnType<typeof simulatedRecurrences>;
  control: SimulatorControl;
}

/** Every route family on one router, behind the shared middleware (protocol.ts). */
function simulatorApp(opts: SimulatorOptions, { state, psp, recurrences, control }: Parts, logger: SimulatorLogger) {
  const router = new Router();
  const route = protocolRoute(state);
  const bearer = bearerAuth(state.tokens);
  oauthRoutes(router, {
    route,
    tokens: state.tokens,
    clientId: opts.clientId ?? 'pixflow',
    clientSecret: opts.clientSecret ?? 'pixflow-sandbox-secret',
    tokenTtlSeconds: opts.tokenTtlSeconds ?? 3600,
  });
  const deps = { psp, route, bearer };
  cobRoutes(router, deps);
  devolucaoRoutes(router, deps);
  transferRoutes(router, deps);
  defenseRoutes(router, deps);
  recurrenceRoutes({ router, state: recurrences, route, bearer });
  controlRoutes(router, control);
  dueDateRoutes(router, deps);
  const app = new Koa();
  app.use(problemAnswers(logger));
  app.use(bodyParser());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

export async function startAcquirerSimulator(opts: SimulatorOptions): Promise<RunningSimulator> {
  const logger = opts.logger ?? silentLogger;
  const state: SimState = { faults: {}, callbackBaseUrl: opts.callbackBaseUrl, tokens: new Map(), calls: [] };
  const callbacks = callbackSender(opts, state, logger);
  const psp = simulatedPsp(opts, callbacks);
  const recurrences = simulatedRecurrences(callbacks, psp, opts);
  const control = simulatorControl({ state, psp, recurrences, callbacks, logger });
  const app = simulatorApp(opts, { state, psp, recurrences, control }, logger);
  const { server, url } = await listen(app, opts);
  logger.info({ url, callbackBaseUrl: state.callbackBaseUrl }, 'acquirer simulator listening');
  return {
    url,
    control,
    async close() {
      psp.stop();
      recurrences.stop();
      callbacks.close();
      await closeServer(server);
    },
  };
}
