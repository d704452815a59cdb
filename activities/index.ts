/**
 * Every activity the worker registers, built over the services of one process. Activities are thin
 * and idempotent: the rules live in src/services.
 */
import type { Knex } from 'knex';
import type { Config } from '../src/config';
import type { Logger } from '../src/lib/logger';

export interface ActivityDeps {
  knex: Knex;
  config: Config;
  logger: Logger;
}

export function createActivities(_deps: ActivityDeps): Record<string, (...args: never[]) => Promise<unknown>> {
  return {};
}
