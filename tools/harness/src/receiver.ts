/**
 * A real webhook receiver for the reliability suites: verifies `x-webhook-signature` and the
 * Standard Webhooks headers (official `standardwebhooks` and `svix` verifiers, an independent HMAC)
 * on the raw bytes with the secret registered for its path (401 when one fails), keeps every request,
 * and can refuse the first attempt of every delivery (500) so that each one needs a retry.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  receiverVerifiesSignature,
  standardHeadersOf,
  standardVerdicts,
} from '../../../test/support/webhook-signature';
import { onRunEnd } from '../../../test/support/lifecycle';

export interface Delivered {
  path: string;
  deliveryId: string;
  event: string;
  data: Record<string, unknown>;
  signatureValid: boolean;
  answered: number;
  at: number;
}

export interface CountingReceiver {
  baseUrl: string;
  url(path: string): string;
  expect(path: string, secret: string, opts?: { failFirstAttempt?: boolean }): void;
  received(path?: string): Delivered[];
  /**
   * The first request (already kept or still to come) that `match` accepts: waits on arrivals, so a
   * benchmark's wait costs nothing per poll (bounded by `timeoutMs`).
   */
  arrival(match: (d: Delivered) => boolean, timeoutMs?: number): Promise<Delivered>;
  /** Requests answered 2xx, by delivery id. */
  successesByDelivery(path?: string): Map<string, number>;
  close(): Promise<void>;
}

export async function startCountingReceiver(): Promise<CountingReceiver> {
  const routes = new Map<string, { secret: string; failFirstAttempt: boolean }>();
  const seenIds = new Set<string>();
  const all: Delivered[] = [];
  const waiters = new Set<{ match: (d: Delivered) => boolean; resolve: (d: Delivered) => void }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      const raw = Buffer.concat(chunks);
      const route = routes.get(path);
      const signature = req.headers['x-webhook-signature'];
      const verdicts =
        route === undefined ? undefined : standardVerdicts(route.secret, raw, standardHeadersOf(req.headers));
      const signatureValid =
        route !== undefined &&
        typeof signature === 'string' &&
        receiverVerifiesSignature(route.secret, raw, signature) &&
        verdicts !== undefined &&
        verdicts.standardwebhooks &&
        verdicts.svix &&
        verdicts.independent;
      const deliveryId = String(req.headers['x-webhook-id'] ?? '');
      let parsed: { event?: string; data?: Record<string, unknown> } = {};
      try {
        parsed = JSON.parse(raw.toString('utf8')) as typeof parsed;
      } catch {
        // recorded with empty event
      }
      let answered = 200;
      if (!signatureValid) answered = 401;
      else if (route?.failFirstAttempt && !seenIds.has(deliveryId)) answered = 500;
      seenIds.add(deliveryId);
      const delivered: Delivered = {
        path,
        deliveryId,
        event: parsed.event ?? '',
        data: parsed.data ?? {},
        signatureValid,
        answered,
        at: Date.now(),
      };
      all.push(delivered);
      for (const w of waiters)
        if (w.match(delivered)) {
          waiters.delete(w);
          w.resolve(delivered);
        }
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onRunEnd(close);
  const received = (path?: string): Delivered[] => all.filter((d) => path === undefined || d.path === path);
  return {
    baseUrl,
    url: (path) => baseUrl + path,
    expect: (path, secret, opts = {}) =>
      void routes.set(path, { secret, failFirstAttempt: opts.failFirstAttempt === true }),
    received,
    arrival(match, timeoutMs = 60_000) {
      const kept = all.find(match);
      if (kept) return Promise.resolve(kept);
      return new Promise<Delivered>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching webhook within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = {
          match,
          resolve: (d: Delivered) => {
            clearTimeout(timer);
            resolve(d);
          },
        };
        waiters.add(waiter);
      });
    },
    successesByDelivery(path) {
      const m = new Map<string, number>();
      for (const d of received(path))
        if (d.answered >= 200 && d.answered < 300) m.set(d.deliveryId, (m.get(d.deliveryId) ?? 0) + 1);
      return m;
    },
    close,
  };
}
