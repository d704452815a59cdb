/**
 * `npm run simulator`: the acquirer simulator alone (docs/production.md "Run in production shape"), for a
 * stack whose acquirer is the sandbox (docker compose --profile sandbox). The API and worker
 * reach it at ACQUIRER_URL with ACQUIRER_SANDBOX=true; it signs its callbacks with
 * ACQUIRER_CALLBACK_SECRET and sends them to PUBLIC_BASE_URL. Its control surface (pay a cob,
 * complete or fail a transfer, raise an infraction) is under /_sim on the same port.
 */
import fs from 'node:fs';
import { loadConfig } from '../config';
import { createLogger } from '../lib/logger';
import { SIMULATOR_CLIENT } from '../acquirer';
import { startAcquirerSimulator } from '../acquirer/simulator/server';
import { onShutdown, printStartupTable } from '../process/lifecycle';
import { runEntryPoint } from '../process/entry-point';

runEntryPoint(async () => {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL });
  const stops: Array<[string, () => Promise<void>]> = [];
  onShutdown(logger, stops);
  const callbackBaseUrl = config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`;
  const simulator = await startAcquirerSimulator({
    port: config.SIMULATOR_PORT,
    host: config.SIMULATOR_HOST,
    callbackBaseUrl,
    callbackSecret: config.ACQUIRER_CALLBACK_SECRET,
    clientId: config.ACQUIRER_CLIENT_ID ?? SIMULATOR_CLIENT.clientId,
    clientSecret: config.ACQUIRER_CLIENT_SECRET ?? SIMULATOR_CLIENT.clientSecret,
    transferDelayMs: config.SIMULATOR_TRANSFER_DELAY_MS,
    autoComplete: config.SIMULATOR_AUTO_COMPLETE,
    logger,
    // HTTPS, and mTLS with a client CA (docs/production.md "Acquirer mTLS").
    ...(config.SIMULATOR_TLS_CERT_PATH && config.SIMULATOR_TLS_KEY_PATH
      ? {
          tls: {
            cert: fs.readFileSync(config.SIMULATOR_TLS_CERT_PATH),
            key: fs.readFileSync(config.SIMULATOR_TLS_KEY_PATH),
            ...(config.SIMULATOR_TLS_CLIENT_CA_PATH
              ? { clientCa: fs.readFileSync(config.SIMULATOR_TLS_CLIENT_CA_PATH) }
              : {}),
          },
        }
      : {}),
  });
  stops.push(['simulator', () => simulator.close()]);
  printStartupTable([
    [
      'Acquirer simulator',
      `${simulator.url}${config.SIMULATOR_TLS_CLIENT_CA_PATH ? ' (client certificate required)' : ''}`,
    ],
    ['Callbacks to', callbackBaseUrl],
    ['Control', `${simulator.url}/_sim`],
  ]);
});
