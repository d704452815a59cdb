/**
 * Signed callbacks from the simulator to the service, delivered like a real PSP would: POST with
 * the HMAC signature, retried with backoff until a 2xx (bounded), optionally duplicated or
 * delayed out of order by fault injection.
 */
import { CALLBACK_SIGNATURE_HEADER, signCallback } from '../callback-signature';

export interface CallbackSender {
  send(path: string, body: unknown): void;
  /** Resolves when every callback sent so far has been delivered or given up. */
  idle(): Promise<void>;
  readonly delivered: Array<{ path: string; body: unknown; status: number }>;
}

export interface CallbackOptions {
  baseUrl: () => string | undefined;
  secret: string;
  maxAttempts?: number;
  duplicate: () => boolean;
  /** Extra delay before a callback goes out (out-of-order delivery). */
  delayMs: () => number;
}

export function createCallbackSender(opts: CallbackOptions): CallbackSender {
  const inFlight = new Set<Promise<void>>();
  const delivered: CallbackSender['delivered'] = [];
  const maxAttempts = opts.maxAttempts ?? 6;

  async function deliver(path: string, raw: string, body: unknown): Promise<void> {
    const delay = opts.delayMs();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const base = opts.baseUrl();
      if (!base) return;
      try {
        const res = await fetch(new URL(path.replace(/^\//, ''), base.replace(/\/?$/, '/')), {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CALLBACK_SIGNATURE_HEADER]: signCallback(opts.secret, raw) },
          body: raw,
          signal: AbortSignal.timeout(5_000),
        });
        await res.arrayBuffer();
        if (res.ok) {
          delivered.push({ path, body, status: res.status });
          return;
        }
      } catch {
        // Unreachable or timed out: retry below, like a PSP would.
      }
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5_000)));
    }
  }

  function track(p: Promise<void>): void {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }

  return {
    delivered,
    send(path, body) {
      const raw = JSON.stringify(body);
      track(deliver(path, raw, body));
      if (opts.duplicate()) track(deliver(path, raw, body));
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
