/**
 * The acquirer a process talks to: the configured one (ACQUIRER_URL), or the simulator started
 * in-process by `npm start` when ACQUIRER_URL is unset (then the sandbox endpoints are mounted).
 */
import fs from 'node:fs';
import type { Config } from '../config';
import { HttpAcquirer, type AcquirerTls } from './http-client';
import { startAcquirerSimulator } from './simulator/server';
import { startSimulatorThread } from './simulator/threaded';
import { sandboxControlOf, type SandboxControl } from './sandbox-control';
import type { Acquirer } from './types';

export type * from './types';
export { AcquirerError, type AcquirerErrorCode } from './errors';
export { CALLBACK_SIGNATURE_HEADER, signCallback, verifyCallback } from './callback-signature';

export interface AcquirerHandle {
  acquirer: Acquirer;
  /** Present only when the acquirer is the embedded simulator: what the sandbox endpoints drive. */
  sandbox?: SandboxControl;
  url: string;
  close(): Promise<void>;
}

export const SIMULATOR_CLIENT = { clientId: 'pixflow', clientSecret: 'pixflow-sandbox-secret' };

/**
 * ACQUIRER_TLS_*_PATH read now (a restart picks up a renewed certificate); undefined when none is
 * set (plain https with the system's CAs, or http to a sandbox).
 */
export function acquirerTls(
  config: Pick<Config, 'ACQUIRER_TLS_CA_PATH' | 'ACQUIRER_TLS_CERT_PATH' | 'ACQUIRER_TLS_KEY_PATH'>,
): AcquirerTls | undefined {
  const read = (file: string | undefined): Buffer | undefined =>
    file === undefined ? undefined : fs.readFileSync(file);
  const tls = {
    ca: read(config.ACQUIRER_TLS_CA_PATH),
    cert: read(config.ACQUIRER_TLS_CERT_PATH),
    key: read(config.ACQUIRER_TLS_KEY_PATH),
  };
  return tls.ca || tls.cert ? tls : undefined;
}

export async function openAcquirer(config: Config): Promise<AcquirerHandle> {
  if (config.ACQUIRER_URL) {
    const acquirer = new HttpAcquirer({
      baseUrl: config.ACQUIRER_URL,
      // The simulator's fixed sandbox credentials, unless the operator set others.
      clientId: config.ACQUIRER_CLIENT_ID ?? (config.ACQUIRER_SANDBOX ? SIMULATOR_CLIENT.clientId : ''),
      clientSecret: config.ACQUIRER_CLIENT_SECRET ?? (config.ACQUIRER_SANDBOX ? SIMULATOR_CLIENT.clientSecret : ''),
      timeoutMs: config.ACQUIRER_TIMEOUT_MS,
      tls: acquirerTls(config),
    });
    return { acquirer, url: config.ACQUIRER_URL, close: () => acquirer.close() };
  }
  const options = {
    callbackSecret: config.ACQUIRER_CALLBACK_SECRET,
    transferDelayMs: config.SIMULATOR_TRANSFER_DELAY_MS,
    autoComplete: config.SIMULATOR_AUTO_COMPLETE,
    keyActivationDelayMs: config.SIMULATOR_KEY_ACTIVATION_DELAY_MS,
    ...SIMULATOR_CLIENT,
  };
  // On a thread of its own by default (docs/performance.md "Where a charge's time goes"): its side of every
  // protocol call stays off the API's event loop, as a real acquirer's would.
  const simulator = config.SIMULATOR_THREAD
    ? await startSimulatorThread(options)
    : await startAcquirerSimulator(options).then((s) => ({
        url: s.url,
        control: sandboxControlOf(s.control),
        close: () => s.close(),
      }));
  const acquirer = new HttpAcquirer({
    baseUrl: simulator.url,
    ...SIMULATOR_CLIENT,
    timeoutMs: config.ACQUIRER_TIMEOUT_MS,
  });
  return {
    acquirer,
    sandbox: simulator.control,
    url: simulator.url,
    close: async () => {
      await acquirer.close();
      await simulator.close();
    },
  };
}
