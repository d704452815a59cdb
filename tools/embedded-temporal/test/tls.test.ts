/**
 * The server's TLS, client-certificate and API-key options as the CLI takes them (README "TLS and
 * API keys"): the launcher started with `--tls-cert/--tls-key/--tls-client-ca/--api-key` answers a
 * client that brings the CA, its certificate and the key, and refuses one without the key
 * (UNAUTHENTICATED) or without a certificate. Workflows over these options run in the
 * repository's test/workflow/temporal-security.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Connection } from '@temporalio/client';
import { TEST_SERVER_LAUNCHER } from '../../../test/support/temporal';
import { makeCa, writePem } from '../../../test/support/certificates';
import { parseArgs } from '../src/main';
import { freePort, waitFor } from './support';

describe('embedded-temporal: TLS, client certificates and API keys (CLI)', function () {
  this.timeout(60_000);
  let dir: string;
  let files: Record<'ca.pem' | 'server.pem' | 'server-key.pem' | 'client.pem' | 'client-key.pem', string>;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tts-tls-'));
    const ca = await makeCa('tts test CA');
    const server = await ca.issue({ commonName: 'localhost', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    const client = await ca.issue({ commonName: 'a client', usage: 'client' });
    files = writePem(dir, {
      'ca.pem': ca.certPem,
      'server.pem': server.certPem,
      'server-key.pem': server.keyPem,
      'client.pem': client.certPem,
      'client-key.pem': client.keyPem,
    });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses the security flags in both shapes, reading the files', () => {
    const flags = ['--tls-cert', files['server.pem'], `--tls-key=${files['server-key.pem']}`, '--api-key', 'k1'];
    for (const opts of [
      parseArgs(['--port', '7299', ...flags, '--tls-client-ca', files['ca.pem']]),
      parseArgs(['server', 'start-dev', '--port', '7299', ...flags, '--tls-client-ca', files['ca.pem']]),
    ]) {
      assert.equal(opts.apiKey, 'k1');
      assert.equal(String(opts.tls?.cert), fs.readFileSync(files['server.pem'], 'utf8'));
      assert.equal(String(opts.tls?.key), fs.readFileSync(files['server-key.pem'], 'utf8'));
      assert.equal(String(opts.tls?.clientCa), fs.readFileSync(files['ca.pem'], 'utf8'));
    }
    assert.equal(parseArgs(['--port', '7299']).tls, undefined);
  });

  it('the launcher serves gRPC over mTLS with an API key, and refuses a call without the key', async () => {
    const port = await freePort();
    const child = spawn(
      TEST_SERVER_LAUNCHER,
      [
        '--port',
        String(port),
        '--tls-cert',
        files['server.pem'],
        '--tls-key',
        files['server-key.pem'],
        '--tls-client-ca',
        files['ca.pem'],
        '--api-key',
        'the-key',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const ca = fs.readFileSync(files['ca.pem']);
    const clientCertPair = { crt: fs.readFileSync(files['client.pem']), key: fs.readFileSync(files['client-key.pem']) };
    try {
      await waitFor(() => /listening/.test(stderr) || child.exitCode !== null, 20_000, 'launcher listening');
      assert.match(stderr, /"tls":"mtls"/);
      const address = `127.0.0.1:${port}`;

      const conn = await Connection.connect({
        address,
        tls: { serverRootCACertificate: ca, clientCertPair, serverNameOverride: 'localhost' },
        apiKey: 'the-key',
      });
      assert.ok((await conn.workflowService.getSystemInfo({})).serverVersion);
      // Same connection, another key for one call: refused by the server, not by TLS.
      await assert.rejects(
        conn.withApiKey('not-the-key', () => conn.workflowService.getSystemInfo({})),
        (err: { code?: number; details?: string }) => err.code === 16 && /API key/.test(err.details ?? ''),
      );
      await conn.close();

      // TLS with ALPN h2, and no certificate: the handshake is refused by the server.
      const refused = await new Promise<string>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2'], servername: 'localhost' });
        s.on('secureConnect', () => s.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
        s.on('error', (err) => resolve(err.message));
        s.on('close', () => resolve('closed'));
      });
      assert.match(refused, /certificate|closed/i);

      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
