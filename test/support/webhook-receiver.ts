/**
 * A real local HTTP receiver for webhook tests. Each test uses its own path; the receiver keeps the
 * raw bytes of every request and verifies them with the secret registered for the path: the seed's
 * `x-webhook-signature` (independent HMAC) and the Standard Webhooks headers with the official
 * `standardwebhooks` package, `svix`'s verifier and an independent HMAC (webhook-signature.ts),
 * never the app's own code. It answers 401 when any check fails, as a receiver should, else with
 * the behaviours scripted for the path (then 200).
 * Every body is checked against the OpenAPI document's `webhooks` object: `requests` and `waitFor`
 * fail on a body that drifts from it.
 *
 *   const r = await startReceiver();
 *   r.expect('/a', secret);                       // verify signatures on /a
 *   r.expect('/a', newSecret, [oldSecret]);       // during a rotation: receivers holding either verify
 *   r.script('/a', [{ status: 500 }]);            // first 500, then 200
 *   r.script('/b', [], { status: 500 });          // always 500
 *   const [req] = await r.waitFor('/a', 1);
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { receiverVerifiesSignature, standardHeadersOf, standardVerdicts } from './webhook-signature';
import { eventually } from './charges';
import { onRunEnd } from './lifecycle';
import { webhookBodyProblems } from './openapi-validator';
import assert from 'node:assert/strict';

export interface Behaviour {
  status: number;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer with an endless body (a hostile receiver), until the client hangs up. */
  endless?: boolean;
}

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: { event: string; timestamp: string; data: Record<string, unknown> };
  /** `x-webhook-signature` verified with the path's (current) secret. */
  signatureValid: boolean;
  /** Standard Webhooks: each verifier accepted the request with every secret registered for the path. */
  standard: { standardwebhooks: boolean; svix: boolean; independent: boolean };
  answered: number;
  /** Where the body drifts from the document's `webhooks` (empty when it matches). */
  contractProblems: string[];
}

/** The received requests, failing when one of them is not what the document describes. */
function matchingDocument(list: Received[]): Received[] {
  for (const r of list)
    assert.deepEqual(
      r.contractProblems,
      [],
      `webhook body on ${r.path} does not match /openapi.json webhooks: ${r.raw.toString()}`,
    );
  return list;
}

export interface Receiver {
  baseUrl: string;
  url(path: string): string;
  /** `secret` signs both headers; each of `alsoValid` (a rotated-out secret) must verify `webhook-signature` too. */
  expect(path: string, secret: string, alsoValid?: string[]): void;
  script(path: string, behaviours: Behaviour[], then?: Behaviour): void;
  requests(path: string): Received[];
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, { current: string; alsoValid: string[] }>();
  const scripts = new Map<string, { queue: Behaviour[]; then: Behaviour }>();
  const received = new Map<string, Received[]>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      const raw = Buffer.concat(chunks);
      const registered = secrets.get(path);
      const signature = req.headers['x-webhook-signature'];
      const signatureValid =
        registered !== undefined &&
        typeof signature === 'string' &&
        receiverVerifiesSignature(registered.current, raw, signature);
      const standardHeaders = standardHeadersOf(req.headers);
      const verdicts = registered
        ? [registered.current, ...registered.alsoValid].map((k) => standardVerdicts(k, raw, standardHeaders))
        : [];
      const standard = {
        standardwebhooks: verdicts.length > 0 && verdicts.every((v) => v.standardwebhooks),
        svix: verdicts.length > 0 && verdicts.every((v) => v.svix),
        independent: verdicts.length > 0 && verdicts.every((v) => v.independent),
      };
      const verified = signatureValid && standard.standardwebhooks && standard.svix && standard.independent;
      const script = scripts.get(path);
      const behaviour: Behaviour = script?.queue.shift() ?? script?.then ?? { status: 200 };
      const status = verified ? behaviour.status : 401;
      let body: Received['body'];
      try {
        body = JSON.parse(raw.toString('utf8')) as Received['body'];
      } catch {
        body = { event: '', timestamp: '', data: {} };
      }
      const list = received.get(path) ?? [];
      list.push({
        path,
        headers: req.headers,
        raw,
        body,
        signatureValid,
        standard,
        answered: status,
        contractProblems: webhookBodyProblems(raw),
      });
      received.set(path, list);
      const answer = (): void => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain', ...behaviour.headers });
        if (behaviour.endless) {
          const chunk = Buffer.alloc(64 * 1024, 'x');
          const pump = (): void => {
            while (!res.destroyed && res.write(chunk));
          };
          res.on('drain', pump);
          pump();
          return;
        }
        res.end(behaviour.body ?? (verified ? 'ok' : 'bad signature'));
      };
      if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onRunEnd(close);

  return {
    baseUrl,
    url: (path) => baseUrl + path,
    expect: (path, secret, alsoValid = []) => void secrets.set(path, { current: secret, alsoValid }),
    script: (path, behaviours, then = { status: 200 }) => void scripts.set(path, { queue: [...behaviours], then }),
    requests: (path) => matchingDocument([...(received.get(path) ?? [])]),
    waitFor: (path, count, timeoutMs = 20_000) =>
      eventually(
        async () => {
          const list = received.get(path) ?? [];
          return list.length >= count ? matchingDocument([...list]) : undefined;
        },
        `${count} request(s) on ${path}`,
        timeoutMs,
      ),
    close,
  };
}
