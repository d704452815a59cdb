/**
 * The acquirer over mutual TLS (docs/production.md "Acquirer mTLS"), as the BCB API Pix requires of
 * PSP APIs: the simulator serves HTTPS and requires a client certificate from the acquirer's
 * client CA; the HTTP client, configured the way an operator would (ACQUIRER_TLS_*_PATH through
 * loadConfig and openAcquirer), gets its OAuth token and creates a cob with the right certificate,
 * and is refused, before any request is read, with a certificate from another CA, with none, or
 * when it does not trust the acquirer's server certificate. Certificates are made at test time.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openAcquirer, SIMULATOR_CLIENT } from '../../src/acquirer';
import { AcquirerError } from '../../src/acquirer/errors';
import { startAcquirerSimulator, type RunningSimulator } from '../../src/acquirer/simulator/server';
import { newTxid } from '../../src/pix/brcode';
import { makeCa, writePem } from '../support/certificates';

const SECRET = 'mtls-test-callback-secret';

describe('acquirer client over mTLS (from configuration)', function () {
  this.timeout(60_000);
  let dir: string;
  let sim: RunningSimulator;
  let pem: Record<
    | 'server-ca.pem'
    | 'server.pem'
    | 'server-key.pem'
    | 'client-ca.pem'
    | 'client.pem'
    | 'client-key.pem'
    | 'rogue.pem'
    | 'rogue-key.pem',
    string
  >;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-acquirer-mtls-'));
    // Two CAs, as in the Pix system: one for the acquirer's server, one for its PSP clients.
    const serverCa = await makeCa('acquirer server CA');
    const clientCa = await makeCa('acquirer client CA');
    const rogueCa = await makeCa('not the acquirer');
    const server = await serverCa.issue({ commonName: 'localhost', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    const client = await clientCa.issue({ commonName: 'pixflow', usage: 'client' });
    const rogue = await rogueCa.issue({ commonName: 'pixflow', usage: 'client' });
    pem = writePem(dir, {
      'server-ca.pem': serverCa.certPem,
      'server.pem': server.certPem,
      'server-key.pem': server.keyPem,
      'client-ca.pem': clientCa.certPem,
      'client.pem': client.certPem,
      'client-key.pem': client.keyPem,
      'rogue.pem': rogue.certPem,
      'rogue-key.pem': rogue.keyPem,
    });
    sim = await startAcquirerSimulator({
      callbackSecret: SECRET,
      ...SIMULATOR_CLIENT,
      tls: {
        cert: fs.readFileSync(pem['server.pem']),
        key: fs.readFileSync(pem['server-key.pem']),
        clientCa: fs.readFileSync(pem['client-ca.pem']),
      },
    });
  });
  after(async () => {
    await sim?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const configWith = (env: Record<string, string>) =>
    loadConfig({
      DATA_DIR: dir,
      ACQUIRER_URL: sim.url,
      ACQUIRER_SANDBOX: 'true',
      ACQUIRER_CALLBACK_SECRET: SECRET,
      ACQUIRER_TIMEOUT_MS: '10000',
      ...env,
    });

  const cob = () => ({ txid: newTxid(), amount: 1234, expiresIn: 3600, key: 'loja@example.com' });

  it('serves HTTPS', () => assert.match(sim.url, /^https:\/\/127\.0\.0\.1:\d+$/));

  it('gets its OAuth token and creates a cob with the configured client certificate', async () => {
    const before = sim.control.calls.length;
    const handle = await openAcquirer(
      configWith({
        ACQUIRER_TLS_CA_PATH: pem['server-ca.pem'],
        ACQUIRER_TLS_CERT_PATH: pem['client.pem'],
        ACQUIRER_TLS_KEY_PATH: pem['client-key.pem'],
      }),
    );
    try {
      const req = cob();
      const created = await handle.acquirer.createCob(req);
      assert.equal(created.txid, req.txid);
      assert.equal(created.amount, 1234);
      assert.equal((await handle.acquirer.getCob(req.txid)).status, 'ATIVA');
    } finally {
      await handle.close();
    }
    assert.deepEqual(
      sim.control.calls.slice(before).map((c) => [c.route, c.status]),
      [
        ['token', 200],
        ['createCob', 201],
        ['getCob', 200],
      ],
    );
  });

  const refusals: [string, Record<string, string>][] = [
    [
      'a client certificate from another CA',
      {
        ACQUIRER_TLS_CERT_PATH: 'rogue.pem',
        ACQUIRER_TLS_KEY_PATH: 'rogue-key.pem',
        ACQUIRER_TLS_CA_PATH: 'server-ca.pem',
      },
    ],
    ['no client certificate', { ACQUIRER_TLS_CA_PATH: 'server-ca.pem' }],
    [
      "an acquirer whose server certificate we do not trust (the system's CAs only)",
      { ACQUIRER_TLS_CERT_PATH: 'client.pem', ACQUIRER_TLS_KEY_PATH: 'client-key.pem' },
    ],
  ];
  for (const [what, files] of refusals) {
    it(`is refused with ${what}: a retryable NETWORK error, and the acquirer read no request`, async () => {
      const before = sim.control.calls.length;
      const env = Object.fromEntries(Object.entries(files).map(([k, f]) => [k, pem[f as keyof typeof pem]]));
      const handle = await openAcquirer(configWith(env));
      try {
        await assert.rejects(handle.acquirer.createCob(cob()), (err: unknown) => {
          assert.ok(err instanceof AcquirerError, String(err));
          assert.equal(err.code, 'NETWORK', err.message);
          assert.equal(err.retryable, true);
          assert.match(err.message, /POST \/oauth\/token/);
          return true;
        });
      } finally {
        await handle.close();
      }
      assert.equal(sim.control.calls.length, before, 'not even the token request reached the acquirer');
    });
  }

  it('configuration: certificate and key go together, need an https ACQUIRER_URL and readable files', () => {
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ DATA_DIR: dir, ...env });
        return '';
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    };
    assert.match(
      problems({ ACQUIRER_URL: sim.url, ACQUIRER_TLS_CERT_PATH: pem['client.pem'] }),
      /ACQUIRER_TLS_CERT_PATH and ACQUIRER_TLS_KEY_PATH: set both or neither/,
    );
    assert.match(
      problems({ ACQUIRER_URL: 'http://127.0.0.1:1', ACQUIRER_TLS_CA_PATH: pem['server-ca.pem'] }),
      /needs an https ACQUIRER_URL/,
    );
    assert.match(
      problems({ ACQUIRER_URL: sim.url, ACQUIRER_TLS_CA_PATH: path.join(dir, 'missing.pem') }),
      /ACQUIRER_TLS_CA_PATH: cannot read/,
    );
    assert.equal(problems({ ACQUIRER_URL: sim.url, ACQUIRER_TLS_CA_PATH: pem['server-ca.pem'] }), '');
  });
});
