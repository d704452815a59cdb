/** Runs a process entry point: configuration errors print their list; anything else its stack. */
import { ConfigError } from '../config';
import { EmbeddedPostgresError } from '../db/embedded-postgres';

export function runEntryPoint(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err instanceof ConfigError || err instanceof EmbeddedPostgresError ? err.message : err);
    process.exit(1);
  });
}

/** `npm run api` / `npm run worker` run against real services only; `npm start` embeds them. */
export function requireConfiguredServices(
  config: { DATABASE_URL?: string; TEMPORAL_ADDRESS?: string; ACQUIRER_URL?: string },
  command: string,
): { databaseUrl: string; temporalAddress: string } {
  // Split processes must share one database, one Temporal and one acquirer: no embedded defaults.
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS || !config.ACQUIRER_URL) {
    throw new ConfigError([
      `${command} needs DATABASE_URL, TEMPORAL_ADDRESS and ACQUIRER_URL (use npm start for embedded defaults)`,
    ]);
  }
  return { databaseUrl: config.DATABASE_URL, temporalAddress: config.TEMPORAL_ADDRESS };
}
