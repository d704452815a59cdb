/**
 * The ops CLI's side of PIX key registration (docs/architecture.md "PIX keys: registration and activation"):
 * with a Temporal cluster configured (TEMPORAL_ADDRESS) the CLI starts `pixkey-<id>` itself, like
 * the admin API; without one (embedded defaults: the local server belongs to `npm start`), or if the
 * cluster cannot be reached, the running service's reconciler starts it within minutes.
 */
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { connectTemporalClient, temporalSecurity } from '../temporal/connection';
import { pixKeyWorkflowClient, type PixKeyRef } from '../temporal/clients/pix-key';

export type CliRegistration = 'started' | 'left to the running service';

export async function startPixKeyRegistration(
  config: Config,
  logger: Logger,
  key: PixKeyRef,
): Promise<CliRegistration> {
  if (!config.TEMPORAL_ADDRESS) return 'left to the running service';
  try {
    const temporal = await connectTemporalClient(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, {
      security: temporalSecurity(config),
    });
    try {
      await pixKeyWorkflowClient(temporal.client, config.TEMPORAL_TASK_QUEUE, {
        searchAttributes: config.TEMPORAL_SEARCH_ATTRIBUTES,
      }).register(key);
      return 'started';
    } finally {
      await temporal.close();
    }
  } catch (err) {
    logger.warn({ err, pixKeyId: key.id }, 'could not start the PIX key registration: the running service will');
    return 'left to the running service';
  }
}
