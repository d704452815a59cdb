/**
 * Independent receiver-side checks of the two webhook signatures, written from the documented
 * schemes (docs/api.md "Receiving webhooks") with node:crypto only. The test receivers use these,
 * and the official `standardwebhooks` and `svix` verifiers, rather than the app's own signing code,
 * so that a wrong key derivation or encoding in the app makes the webhook tests fail instead of
 * agreeing with itself.
 */
import crypto from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';

/** `x-webhook-signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the whole `whsec_…` string. */
export function receiverVerifiesSignature(secret: string, raw: Buffer, signature: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(raw).digest();
  return crypto.timingSafeEqual(Buffer.from(signature, 'hex'), expected);
}

export interface StandardHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks, from the spec: the key is the base64 decoding of what follows `whsec_`; the
 * signed content is `id.timestamp.body`; `webhook-signature` lists `v1,<base64>` entries separated
 * by spaces, any one of which may match; a timestamp more than 5 minutes off is refused.
 */
export function receiverVerifiesStandard(
  secret: string,
  raw: Buffer,
  headers: StandardHeaders,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = headers;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = crypto.createHmac('sha256', key).update(`${id}.${timestamp}.`).update(raw).digest();
  return signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

/** The official `standardwebhooks` package's verdict (it throws on any mismatch). */
export function standardwebhooksVerifies(secret: string, raw: Buffer, headers: StandardHeaders): boolean {
  try {
    new StandardWebhook(secret).verify(raw, { ...headers });
    return true;
  } catch {
    return false;
  }
}

/** The `svix` package's `Webhook` verifier (it reads the unbranded `webhook-*` headers too). */
export function svixVerifies(secret: string, raw: Buffer, headers: StandardHeaders): boolean {
  try {
    new SvixWebhook(secret).verify(raw, { ...headers });
    return true;
  } catch {
    return false;
  }
}

/** The three Standard Webhooks verdicts for one secret. */
export function standardVerdicts(
  secret: string,
  raw: Buffer,
  headers: StandardHeaders,
): { standardwebhooks: boolean; svix: boolean; independent: boolean } {
  return {
    standardwebhooks: standardwebhooksVerifies(secret, raw, headers),
    svix: svixVerifies(secret, raw, headers),
    independent: receiverVerifiesStandard(secret, raw, headers),
  };
}

/** The Standard Webhooks headers of a received request (empty strings when absent). */
export function standardHeadersOf(headers: Record<string, string | string[] | undefined>): StandardHeaders {
  const one = (name: string): string => {
    const v = headers[name];
    return typeof v === 'string' ? v : '';
  };
  return {
    'webhook-id': one('webhook-id'),
    'webhook-timestamp': one('webhook-timestamp'),
    'webhook-signature': one('webhook-signature'),
  };
}
