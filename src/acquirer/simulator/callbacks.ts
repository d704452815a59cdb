/**
 * Signed callbacks from the simulator to the service, delivered like a real PSP would: a POST
 * signed with the shared secret, retried with exponential backoff until a 2xx, a bounded number of
 * times. Fault injection can duplicate them or deliver them out of order.
 *
 * Every delivery of one logical callback (retries and injected duplicates alike) carries the same
 * `x-acquirer-callback-id`, so the receiver and tests can tell a redelivery from a new event.
 */
import crypto from 'node:crypto';
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../callback-signature';
import type { SimulatorLogger } from './logger';
import { errorMessage } from '../../lib/error-message';

export const CALLBACK_ID_HEADER = 'x-acquirer-callback-id';
export const CALLBACK_ATTEMPT_HEADER = 'x-acquirer-callback-attempt';

export interface CallbackAttempt {
  callbackId: string;
  path: string;
  attempt: number;
  /** HTTP status, or undefined when the receiver could not be reached / timed out. */
  status?: number;
  error?: string;
}

export interface CallbackSender {
  send(path: string, body: unknown): void;
  /** Resolves when every callback dispatched so far has been delivered or given up (held ones excluded). */
  idle(): Promise<void>;
  /** Sends the callbacks held by `outOfOrderCallbacks`, newest first. */
  release(): void;
  readonly held: number;
  /** Callbacks answered 2xx (one entry per delivery, so duplicates appear twice). */
  readonly delivered: Array<{ callbackId: string; path: string; body: unknown; status: number }>;
  /** Callbacks given up after maxAttempts. */
  readonly failed: Array<{ callbackId: string; path: string; body: unknown }>;
  /** Every attempt, for tests of the retry behaviour. */
  readonly attempts: CallbackAttempt[];
  close(): void;
}

export interface CallbackOptions {
  baseUrl: () => string | undefined;
  secret: string;
  logger: SimulatorLogger;
  /** Attempts per callback before giving up (default 6). */
  maxAttempts?: number;
  /** First retry delay; doubles each time, capped at 5 s (default 200 ms). */
  retryBaseMs?: number;
  /** Per-attempt timeout (default 5 s). */
  timeoutMs?: number;
  duplicate: () => boolean;
  /** Hold callbacks until release() (or the fault is lifted), then send them newest first. */
  hold: () => boolean;
  /** Random extra delay before a callback goes out (jitter: arrival order not guaranteed). */
  jitterMs: () => number;
}

interface Outgoing {
  callbackId: string;
  path: string;
  raw: string;
  body: unknown;
}

/** What every delivery of one sender shares. */
interface Delivery {
  opts: CallbackOptions;
  maxAttempts: number;
  retryBaseMs: number;
  closing: AbortSignal;
  delivered: CallbackSender['delivered'];
  failed: CallbackSender['failed'];
  attempts: CallbackAttempt[];
}

/** Waits `ms`, or less if the sender closes meanwhile. */
function sleep(closing: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (closing.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    closing.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/** One signed POST of a callback, logged in `attempts`; true when answered 2xx. */
async function attemptOnce(d: Delivery, out: Outgoing, base: string, attempt: number): Promise<boolean> {
  const record: CallbackAttempt = { callbackId: out.callbackId, path: out.path, attempt };
  try {
    const res = await fetch(new URL(out.path.replace(/^\//, ''), base.replace(/\/?$/, '/')), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CALLBACK_SIGNATURE_HEADER]: signCallback(d.opts.secret, out.raw),
        [CALLBACK_ID_HEADER]: out.callbackId,
        [CALLBACK_ATTEMPT_HEADER]: String(attempt),
      },
      body: out.raw,
      signal: AbortSignal.any([AbortSignal.timeout(d.opts.timeoutMs ?? 5_000), d.closing]),
    });
    await res.arrayBuffer();
    record.status = res.status;
    d.attempts.push(record);
    if (!res.ok) return false;
    d.delivered.push({ callbackId: out.callbackId, path: out.path, body: out.body, status: res.status });
    return true;
  } catch (err) {
    record.error = errorMessage(err);
    d.attempts.push(record);
    return false;
  }
}

/** Attempts with exponential backoff until a 2xx, `maxAttempts` times at most, then gives up. */
async function deliver(d: Delivery, out: Outgoing): Promise<void> {
  const jitter = d.opts.jitterMs();
  if (jitter > 0) await sleep(d.closing, jitter);
  for (let attempt = 1; attempt <= d.maxAttempts && !d.closing.aborted; attempt++) {
    const base = d.opts.baseUrl();
    if (!base) {
      d.opts.logger.warn({ path: out.path }, 'acquirer simulator: no callback URL set, callback dropped');
      return;
    }
    if (await attemptOnce(d, out, base, attempt)) return;
    if (attempt < d.maxAttempts) await sleep(d.closing, Math.min(d.retryBaseMs * 2 ** (attempt - 1), 5_000));
  }
  d.failed.push({ callbackId: out.callbackId, path: out.path, body: out.body });
  d.opts.logger.warn(
    { path: out.path, callbackId: out.callbackId, attempts: d.maxAttempts },
    'acquirer simulator: callback given up',
  );
}

export function createCallbackSender(opts: CallbackOptions): CallbackSender {
  const inFlight = new Set<Promise<void>>();
  const held: Outgoing[] = [];
  const closing = new AbortController();
  const d: Delivery = {
    opts,
    maxAttempts: opts.maxAttempts ?? 6,
    retryBaseMs: opts.retryBaseMs ?? 200,
    closing: closing.signal,
    delivered: [],
    failed: [],
    attempts: [],
  };

  function track(p: Promise<void>): void {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }

  /** Delivers one callback (twice when duplicating); resolves when every copy is done. */
  function dispatch(out: Outgoing): Promise<void> {
    const copies = opts.duplicate() ? 2 : 1;
    const all = Promise.all(Array.from({ length: copies }, () => deliver(d, out))).then(() => undefined);
    track(all);
    return all;
  }

  return {
    delivered: d.delivered,
    failed: d.failed,
    attempts: d.attempts,
    get held() {
      return held.length;
    },
    send(path, body) {
      const out = { callbackId: `cb${crypto.randomBytes(12).toString('hex')}`, path, raw: JSON.stringify(body), body };
      if (opts.hold()) held.push(out);
      else void dispatch(out);
    },
    release() {
      // One after the other, newest first, so the receiver sees them in exactly reversed order.
      const batch = held.splice(0).reverse();
      track(
        (async () => {
          for (const out of batch) await dispatch(out);
        })(),
      );
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close() {
      held.length = 0;
      closing.abort();
    },
  };
}
