/**
 * A secured Temporal, for real (docs/production.md "Connecting to a secured Temporal cluster or
 * Temporal Cloud"): the official dev server behind a real TLS endpoint (tools/harness/src/
 * temporal-tls-proxy.ts) over TLS, over mTLS and with an API key, and the
 * project's own connection code configured from the environment (TEMPORAL_TLS_*,
 * TEMPORAL_API_KEY through loadConfig and temporalSecurity): the worker's native connection polls
 * and both kinds of client (grpc-js and the Rust core's) run a workflow with an activity to its
 * end; a client certificate from another CA, no certificate, an untrusted server and a wrong or
 * missing API key are refused. Certificates are made here, at test time (test/support/certificates.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { connectTemporalClient, connectWorkerConnection, temporalSecurity } from '../../src/temporal/connection';
import { makeCa, writePem } from '../support/certificates';
import { devEnv, workflowBundle } from '../support/temporal';
import { startTlsProxy, type RunningTlsProxy, type TlsProxyOptions } from '../../tools/harness/src/temporal-tls-proxy';
import type { loggingWorkflow } from './fixtures/log-context-workflows';

const WORKFLOWS = require.resolve('./fixtures/log-context-workflows');
/** The server certificate names only this: connecting by IP works through the SNI override alone. */
const SERVER_NAME = 'temporal.pixflow.test';
const API_KEY = 'temporal-cloud-style-key-0123456789';
/** What the Rust core and grpc-js say when a TLS handshake fails (either side refusing). */
const TLS_REFUSAL = /certificate|transport|handshake|tls|ssl|failed to connect/i;

describe('Temporal over TLS, mTLS and API keys (client and worker, from configuration)', function () {
  this.timeout(120_000);
  let dir: string;
  let pem: Record<
    'ca.pem' | 'server.pem' | 'server-key.pem' | 'client.pem' | 'client-key.pem' | 'rogue.pem' | 'rogue-key.pem',
    string
  >;
  let servers: RunningTlsProxy[] = [];
  /** The endpoints' warnings (refused handshakes among them). */
  let serverWarnings: string[] = [];
  /** host:port of the run's dev server, behind each endpoint. */
  let upstream: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-temporal-tls-'));
    const ca = await makeCa('pixflow test Temporal CA');
    const rogueCa = await makeCa('some other CA');
    const server = await ca.issue({ commonName: SERVER_NAME, dnsNames: [SERVER_NAME] });
    const client = await ca.issue({ commonName: 'pixflow-worker', usage: 'client' });
    const rogue = await rogueCa.issue({ commonName: 'pixflow-worker', usage: 'client' });
    pem = writePem(dir, {
      'ca.pem': ca.certPem,
      'server.pem': server.certPem,
      'server-key.pem': server.keyPem,
      'client.pem': client.certPem,
      'client-key.pem': client.keyPem,
      'rogue.pem': rogue.certPem,
      'rogue-key.pem': rogue.keyPem,
    });
    // Bundled before any server starts (and the SDK runtime installed quietly with it).
    await workflowBundle(WORKFLOWS);
    upstream = (await devEnv()).address;
  });

  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    serverWarnings = [];
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function serve(opts: { clientCa?: boolean; apiKey?: string; tls?: boolean }): Promise<string> {
    const security: Pick<TlsProxyOptions, 'tls' | 'apiKey'> = {
      ...(opts.tls === false
        ? {}
        : {
            tls: {
              cert: fs.readFileSync(pem['server.pem']),
              key: fs.readFileSync(pem['server-key.pem']),
              ...(opts.clientCa ? { clientCa: fs.readFileSync(pem['ca.pem']) } : {}),
            },
          }),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    };
    const s = await startTlsProxy({ upstream, warn: (w) => void serverWarnings.push(w), ...security });
    servers.push(s);
    return s.address;
  }

  /** The configuration an operator would write, read by the real loader. */
  function securityFrom(address: string, env: Record<string, string>) {
    return temporalSecurity(loadConfig({ TEMPORAL_ADDRESS: address, DATA_DIR: dir, LOG_LEVEL: 'silent', ...env }));
  }

  /** The worker polls through `connectWorkerConnection`; each client kind runs one workflow. */
  async function runWorkflows(address: string, env: Record<string, string>): Promise<void> {
    const security = securityFrom(address, env);
    assert.ok(security, 'the settings give a secured connection');
    const taskQueue = `secure-${randomUUID()}`;
    const notes: string[] = [];
    const connection = await connectWorkerConnection(address, security);
    try {
      const worker = await Worker.create({
        connection,
        namespace: 'default',
        taskQueue,
        workflowBundle: await workflowBundle(WORKFLOWS),
        activities: { logSomething: async (note: string) => void notes.push(note) },
      });
      await worker.runUntil(async () => {
        for (const native of [false, true]) {
          const temporal = await connectTemporalClient(address, 'default', { native, security });
          try {
            await temporal.client.workflow.execute<typeof loggingWorkflow>('loggingWorkflow', {
              taskQueue,
              workflowId: `secure-${randomUUID()}`,
              args: [native ? 'native client' : 'grpc-js client'],
            });
          } finally {
            await temporal.close();
          }
        }
      });
    } finally {
      await connection.close();
    }
    assert.deepEqual(notes, ['grpc-js client', 'native client']);
  }

  /** An error and its causes (the grpc-js client wraps the server's answer in `cause`). */
  function errorChain(err: unknown): string {
    const parts: string[] = [];
    for (let e = err; e !== undefined && parts.length < 5; e = e instanceof Error ? e.cause : undefined)
      parts.push(e instanceof Error ? e.message : String(e));
    return parts.join(' <- ');
  }

  /** Every way in (worker connection, both client kinds) is refused. */
  async function assertRefused(address: string, env: Record<string, string>, why: RegExp): Promise<void> {
    const security = securityFrom(address, env);
    const attempts: [string, () => Promise<{ close(): Promise<void> }>][] = [
      ['worker connection', () => connectWorkerConnection(address, security)],
      ['grpc-js client', () => connectTemporalClient(address, 'default', { native: false, security })],
      ['native client', () => connectTemporalClient(address, 'default', { native: true, security })],
    ];
    for (const [what, connect] of attempts) {
      const outcome = await connect().then(
        async (c) => {
          await c.close();
          return 'connected';
        },
        (err: unknown) => errorChain(err),
      );
      assert.notEqual(outcome, 'connected', `${what} must be refused`);
      assert.match(outcome, why, `${what}: ${outcome}`);
    }
  }

  it('configuration: pairs complete, files readable, only for a TEMPORAL_ADDRESS, nothing set means cleartext', () => {
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ DATA_DIR: dir, ...env });
        return '';
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    };
    const address = { TEMPORAL_ADDRESS: 'temporal.example:7233' };
    assert.match(problems({ ...address, TEMPORAL_TLS_CERT_PATH: pem['client.pem'] }), /set both or neither/);
    assert.match(
      problems({ ...address, TEMPORAL_TLS_CA_PATH: path.join(dir, 'missing.pem') }),
      /TEMPORAL_TLS_CA_PATH: cannot read/,
    );
    assert.match(problems({ TEMPORAL_API_KEY: API_KEY }), /TEMPORAL_API_KEY: needs TEMPORAL_ADDRESS/);
    assert.match(
      problems({ ...address, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: pem['ca.pem'] }),
      /TEMPORAL_TLS=false turns TLS off/,
    );
    assert.equal(securityFrom(address.TEMPORAL_ADDRESS, {}), undefined);
    // An API key alone turns TLS on with the system's CAs, as the SDK does.
    assert.deepEqual(securityFrom(address.TEMPORAL_ADDRESS, { TEMPORAL_API_KEY: API_KEY }), {
      tls: {},
      apiKey: API_KEY,
    });
  });

  it('TLS: trusts the server through TEMPORAL_TLS_CA_PATH and TEMPORAL_TLS_SERVER_NAME (SNI)', async () => {
    const address = await serve({});
    await runWorkflows(address, { TEMPORAL_TLS_CA_PATH: pem['ca.pem'], TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });
  });

  it('TLS: a server whose CA is not trusted is refused', async () => {
    const address = await serve({});
    // TLS on, the system's CAs only: the test CA is not among them.
    await assertRefused(address, { TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: SERVER_NAME }, TLS_REFUSAL);
  });

  it('mTLS: the client certificate of TEMPORAL_TLS_CERT_PATH/KEY_PATH is accepted', async () => {
    const address = await serve({ clientCa: true });
    await runWorkflows(address, {
      TEMPORAL_TLS_CA_PATH: pem['ca.pem'],
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CERT_PATH: pem['client.pem'],
      TEMPORAL_TLS_KEY_PATH: pem['client-key.pem'],
    });
  });

  it('mTLS: a client certificate from another CA, or none, is refused', async () => {
    const address = await serve({ clientCa: true });
    const trust = { TEMPORAL_TLS_CA_PATH: pem['ca.pem'], TEMPORAL_TLS_SERVER_NAME: SERVER_NAME };
    await assertRefused(
      address,
      { ...trust, TEMPORAL_TLS_CERT_PATH: pem['rogue.pem'], TEMPORAL_TLS_KEY_PATH: pem['rogue-key.pem'] },
      TLS_REFUSAL,
    );
    await assertRefused(address, trust, TLS_REFUSAL);
    // The server itself refused those handshakes (not some other failure on the client's side).
    assert.ok(
      serverWarnings.some((w) => /TLS handshake refused.*certificate/i.test(w)),
      serverWarnings.join('\n'),
    );
  });

  it('API key (Temporal Cloud shape, over TLS): the right key runs workflows, a wrong or missing one is UNAUTHENTICATED', async () => {
    const address = await serve({ apiKey: API_KEY });
    const trust = { TEMPORAL_TLS_CA_PATH: pem['ca.pem'], TEMPORAL_TLS_SERVER_NAME: SERVER_NAME };
    await runWorkflows(address, { ...trust, TEMPORAL_API_KEY: API_KEY });
    await assertRefused(address, { ...trust, TEMPORAL_API_KEY: 'not-the-key' }, /unauthorized|unauthenticated/i);
    await assertRefused(address, trust, /unauthorized|unauthenticated/i);
  });

  it('API key alone (TEMPORAL_TLS=false, a cleartext server) is sent as Authorization: Bearer', async () => {
    const address = await serve({ tls: false, apiKey: API_KEY });
    await runWorkflows(address, { TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: API_KEY });
    await assertRefused(
      address,
      { TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'not-the-key' },
      /unauthorized|unauthenticated/i,
    );
  });
});
