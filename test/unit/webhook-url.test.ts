/** The webhook address rule and signing helpers, without a network. */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { loadConfig } from '../../src/config';
import { webhookDeliverySettings } from '../../src/services/webhooks/delivery';
import {
  generateWebhookSecret,
  maskWebhookSecret,
  signWebhookBody,
  verifyWebhookSignature,
  standardWebhookSignature,
} from '../../src/services/webhooks/signature';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { receiverVerifiesSignature } from '../support/webhook-signature';
import { guardedLookup, isPublicAddress, webhookUrlProblem, type HostResolver } from '../../src/services/webhooks/url';

describe('webhook address rule', () => {
  it('accepts only global unicast addresses; IPv4-mapped IPv6 is judged as IPv4', () => {
    const refused = [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.1.1',
      'not-an-ip',
    ];
    for (const a of refused) assert.equal(isPublicAddress(a), false, a);
    for (const a of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
      assert.equal(isPublicAddress(a), true, a);
    }
  });

  const dns =
    (table: Record<string, string[]>): HostResolver =>
    async (host) => {
      const found = table[host];
      if (!found) throw new Error('ENOTFOUND');
      return found;
    };

  it('at registration: https only and public addresses only when the rule is on; anything http(s) otherwise', async () => {
    const policy = {
      requirePublicHttps: true,
      resolve: dns({
        'public.test': ['93.184.216.34'],
        'mixed.test': ['93.184.216.34', '10.0.0.2'],
        'mapped.test': ['::ffff:127.0.0.1'],
      }),
    };
    assert.equal(await webhookUrlProblem('https://public.test/hook', policy), null);
    assert.equal(await webhookUrlProblem('https://93.184.216.34/hook', policy), null);
    assert.equal(await webhookUrlProblem('http://public.test/hook', policy), 'must use https');
    for (const url of [
      'https://mixed.test/',
      'https://mapped.test/',
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://[::ffff:7f00:1]/',
      'https://169.254.169.254/',
    ]) {
      assert.match((await webhookUrlProblem(url, policy)) ?? '', /private, loopback/, url);
    }
    assert.equal(await webhookUrlProblem('https://unknown.test/', policy), 'host could not be resolved');
    assert.equal(await webhookUrlProblem('ftp://public.test/', policy), 'must be an http or https URL');
    const open = { requirePublicHttps: false, resolve: dns({}) };
    assert.equal(await webhookUrlProblem('http://127.0.0.1:3000/hook', open), null);
    assert.equal(await webhookUrlProblem('http://localhost/hook', open), null);
  });

  it('at connection: the lookup fails for any non-public answer and passes public ones through', async () => {
    const lookupOnce = (resolve: HostResolver, enforce: boolean, all: boolean) =>
      new Promise<{ err: Error | null; result: string | LookupAddress[] }>((done) =>
        guardedLookup(resolve, enforce)('h.test', { all }, (err, result) =>
          done({ err, result: result as string | LookupAddress[] }),
        ),
      );
    const rebound = dns({ 'h.test': ['127.0.0.1'] });
    const blocked = await lookupOnce(rebound, true, true);
    assert.equal(blocked.err?.name, 'BlockedAddressError');
    assert.match(blocked.err?.message ?? '', /127\.0\.0\.1, which is not a public address/);
    assert.equal((await lookupOnce(rebound, false, false)).result, '127.0.0.1');
    const pub = await lookupOnce(dns({ 'h.test': ['93.184.216.34', '2001:4860:4860::8888'] }), true, true);
    assert.equal(pub.err, null);
    assert.deepEqual(pub.result, [
      { address: '93.184.216.34', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ]);
  });

  it('production forces the rule on; elsewhere WEBHOOK_REQUIRE_PUBLIC_HTTPS turns it on', () => {
    const production = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://u:p@db/pixflow',
      TEMPORAL_ADDRESS: 'temporal:7233',
      ACQUIRER_URL: 'https://acquirer.example',
      ACQUIRER_CLIENT_ID: 'client',
      ACQUIRER_CLIENT_SECRET: 'client-secret',
      JWT_SECRET: 'x'.repeat(32),
      API_KEY_PEPPER: 'pepper',
      ACQUIRER_CALLBACK_SECRET: 'callback',
      WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      METRICS_TOKEN: 'metrics-token',
      WEBHOOK_REQUIRE_PUBLIC_HTTPS: 'false',
    });
    assert.equal(webhookDeliverySettings(production).requirePublicHttps, true);
    const secrets = { JWT_SECRET: 'j', API_KEY_PEPPER: 'p', ACQUIRER_CALLBACK_SECRET: 'c' };
    assert.equal(webhookDeliverySettings(loadConfig({ ...secrets })).requirePublicHttps, false);
    const dev = loadConfig({
      ...secrets,
      WEBHOOK_REQUIRE_PUBLIC_HTTPS: 'true',
      WEBHOOK_RETRY_DELAYS_SECONDS: '5,30,300',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    assert.deepEqual(webhookDeliverySettings(dev), {
      timeoutMs: 2000,
      retryDelaysSeconds: [5, 30, 300],
      sendSecretHeader: false,
      requirePublicHttps: true,
      secretKeys: undefined,
    });
  });
});

describe('webhook secrets and signatures', () => {
  it('secrets are whsec_ + 32 random bytes base64 (Standard Webhooks), masked as first 6 + **** + last 4', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.notEqual(generateWebhookSecret(), secret);
    assert.equal(maskWebhookSecret(secret), `whsec_****${secret.slice(-4)}`);
  });

  it('signs the exact bytes: lowercase hex HMAC-SHA256, and a re-serialised body does not verify', () => {
    const body = Buffer.from('{"event":"charge.paid", "data":{"amount":1}}');
    const sig = signWebhookBody('whsec_k', body);
    assert.match(sig, /^[0-9a-f]{64}$/);
    // A known answer computed outside the app (openssl dgst -sha256 -hmac 'whsec_k'), so the signer
    // cannot agree only with its own verifier: the key is the whole secret, prefix included.
    assert.equal(sig, '567c75a5d56a7080cc24457facf0234c347c0cba0a57f2e74501d564a5991d86');
    assert.equal(receiverVerifiesSignature('whsec_k', body, sig), true);
    assert.equal(verifyWebhookSignature('whsec_k', body, sig), true);
    assert.equal(verifyWebhookSignature('whsec_k', JSON.stringify(JSON.parse(body.toString())), sig), false);
    assert.equal(verifyWebhookSignature('whsec_other', body, sig), false);
    assert.equal(verifyWebhookSignature('whsec_k', body, sig.toUpperCase()), false);
  });

  it('webhook-signature: v1 + base64 HMAC of "id.timestamp.body" keyed with the decoded secret, as the official libraries check', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = Buffer.from('{"event":"charge.paid","data":{"amount":1}}');
    const ts = 1_700_000_000;
    const header = standardWebhookSignature([secret], 'whd_1', ts, body);
    // A known answer computed with the standardwebhooks package (sign), not with the app.
    assert.equal(header, new StandardWebhook(secret).sign('whd_1', new Date(ts * 1000), body));
    const other = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
    const both = standardWebhookSignature([other, secret], 'whd_1', ts, body);
    assert.equal(both.split(' ').length, 2);
    assert.equal(both.split(' ')[1], header);
    // Secrets issued before the Standard Webhooks form are base64url; their key is what they encode.
    const legacy = 'whsec_' + Buffer.alloc(32, 0xfb).toString('base64url');
    assert.equal(
      standardWebhookSignature([legacy], 'whd_1', ts, body),
      standardWebhookSignature(['whsec_' + Buffer.alloc(32, 0xfb).toString('base64')], 'whd_1', ts, body),
    );
  });
});
