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
 *   npm run ops -- statement <merchantId> [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--page 1] [--limit 20] [--csv]
 *   npm run ops -- ledger check [--merchant-id ID ...]   (exits 1 when a violation is found)
 *   npm run ops -- users list <merchantId>
 *   npm run ops -- users set-status <userId> <ACTIVE|DISABLED>
 *   npm run ops -- users revoke-tokens <userId>
 *   npm run ops -- merchants revoke-tokens <merchantId>
 *   npm run ops -- callbacks list [--status PARKED|RECEIVED|APPLIED] [--kind pix] [--limit 100]
 *   npm run ops -- callbacks redrive <callbackId...> | --all-parked
 *   npm run ops -- callbacks reconcile
 *   npm run ops -- cases list [--status OPEN|RESOLVED] [--kind KIND] [--subject ID] [--limit 100]
 *   npm run ops -- cases get <caseId>
 *   npm run ops -- cases resolve <caseId> --action acknowledge|retry|release [--note TEXT]
 *   npm run ops -- workflows list [--merchant ID] [--status Running|Completed|Failed|Canceled|Terminated|
 *                                 ContinuedAsNew|TimedOut] [--type charge|withdrawal|infraction|
 *                                 webhook-delivery|pix-key] [--limit 50]
 *   npm run ops -- workflows show <workflowId> [--run <runId>] [--json]
 *   npm run ops -- webhooks rotate-encryption-key
 *
 * `callbacks redrive` puts parked callbacks back to RECEIVED; `reconcile` (and `redrive`, when it
 * can) then hands every due callback on at once, which needs TEMPORAL_ADDRESS and ACQUIRER_URL —
 * otherwise the API's own reconciler does it within INBOX_REDRIVE_INTERVAL_MS
 * (docs/operations.md "The callback inbox and reconciliation").
 *
 * `workflows list|show` read the deployment's Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, or the
 * address `npm start` writes under DATA_DIR while it runs): the runs matching a visibility query,
 * and one run's history as a table (`--json`: the raw history) (docs/operations.md "Watching workflows").
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Command, InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { loadConfig, type Config } from '../config';
import { openDatabase } from '../db';
import { invalid } from '../lib/errors';
import { createLogger, type Logger } from '../lib/logger';
import {
  addPixKeyBody,
  adjustmentBody,
  auditLogQuery,
  createMerchantBody,
  listMerchantsQuery,
  updateMerchantBody,
  updatePixKeyBody,
} from '../contracts/admin';
import { idempotencyKeyHeader, validate } from '../contracts/validation';
import { CLI_ACTOR, listAudit } from '../services/platform/audit';
import { checkLedgerInvariant } from '../services/ledger/invariant';
import { reencryptWebhookSecrets } from '../services/webhooks/secrets';
import { stderrProgress } from '../process/progress';
import type { MerchantsService } from '../services/accounts/merchants';
import type { StatementService } from '../services/ledger/statement';
import { statementCsvQuery, statementQuery } from '../contracts/statement';
import type { UserAccessService } from '../services/accounts/user-access';
import {
  createAccountServices,
  createCallbacks,
  createOperatorCaseServices,
  createWorkflowClients,
  type WorkflowClients,
} from '../runtime/composition';
import { operatorCaseListQuery, resolveOperatorCaseBody } from '../contracts/operator-cases';
import { OPERATOR_CASE_ACTIONS, OPERATOR_CASE_KINDS } from '../contracts/statuses';
import { updateUserBody } from '../contracts/admin-access';
import type { Knex } from 'knex';
import { openAcquirer } from '../acquirer';
import { createInboxOperations } from '../runtime/composition';
import { connectTemporalClient, temporalSecurity } from '../temporal/connection';
import { readLocalAddress } from '../temporal/local-server';
import { startPixKeyRegistration } from './pix-key-registration';
import type { Client } from '@temporalio/client';
import { CALLBACK_KINDS, CALLBACK_STATUSES, WORKFLOW_EXECUTION_STATUSES, WORKFLOW_KINDS } from '../contracts/statuses';
import { workflowListQuery, workflowShowQuery } from '../contracts/workflow-inspection';
import {
  fetchWorkflowHistory,
  formatHistoryTable,
  historyAsJson,
  historyRows,
  listWorkflows,
} from '../services/platform/workflow-inspection';
import { errorMessage } from '../lib/error-message';

interface Ops {
  knex: Knex;
  merchants: MerchantsService;
  statement: StatementService;
  access: UserAccessService;
  config: Config;
  logger: Logger;
}

/** Opens the database, runs `fn`, prints its result as JSON, always closes the pool. */
async function run(fn: (ops: Ops) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({
    level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
    destination: process.stderr,
  });
  const db = await openDatabase(config, logger);
  try {
    const { merchants, statement, userAccess } = createAccountServices({ knex: db.knex, config, logger });
    const result = await fn({ knex: db.knex, merchants, statement, access: userAccess, config, logger });
    if (result instanceof Readable) await pipeline(result, process.stdout, { end: false });
    else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await db.close();
  }
}

/** Integers only, as in the API: "100" is fine on a command line, "100.5" or "1e3" is not. */
function integer(value: string): number {
  if (!/^-?\d{1,15}$/.test(value)) throw new InvalidArgumentError('must be an integer');
  return Number(value);
}

/** The fee and settlement options `merchants create` and `merchants update` share. */
interface FeeOptions {
  feeBps?: number;
  feeFixed?: number;
  settlementDelay?: number;
}

function withFeeOptions(command: Command): Command {
  return command
    .option('--fee-bps <n>', 'fee in basis points', integer)
    .option('--fee-fixed <cents>', 'fixed fee in cents', integer)
    .option('--settlement-delay <seconds>', 'pending → available delay', integer);
}

/** The fee options as the admin API's body fields. */
const feeFields = (o: FeeOptions) => ({
  feeBps: o.feeBps,
  feeFixed: o.feeFixed,
  settlementDelaySeconds: o.settlementDelay,
});

/** Same schema, same messages as the admin API. */
const input = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> => validate(schema, raw, 'Input');

export function buildProgram(): Command {
  const program = new Command('ops').description('pixflow operator commands (prints JSON)');
  for (const add of [
    merchantCommands,
    userCommands,
    pixKeyCommands,
    moneyCommands,
    callbackCommands,
    caseCommands,
    workflowCommands,
    ledgerCommands,
    webhookCommands,
  ])
    add(program);
  return program;
}

function merchantCommands(program: Command): void {
  const merchants = program.command('merchants').description('create, list, inspect and update merchants');
  withFeeOptions(
    merchants
      .command('create')
      .requiredOption('--name <name>')
      .requiredOption('--document <digits>', 'CPF (11) or CNPJ (14 digits)')
      .requiredOption('--email <email>', "the merchant user's login")
      .requiredOption('--password <password>', "the merchant user's password (≥ 8 chars)"),
  ).action((o: FeeOptions & { name: string; document: string; email: string; password: string }) =>
    run(({ merchants: svc }) =>
      svc.createMerchant(
        CLI_ACTOR,
        input(createMerchantBody, {
          name: o.name,
          document: o.document,
          email: o.email,
          password: o.password,
          ...feeFields(o),
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
    .action((merchantId: string) =>
      run(async ({ merchants: svc }) => ({ merchant: await svc.getMerchant(merchantId) })),
    );

  withFeeOptions(
    merchants
      .command('update <merchantId>')
      .option('--kyc-status <status>', 'PENDING | APPROVED | REJECTED')
      .option('--status <status>', 'ACTIVE | SUSPENDED')
      .option('--acquirer-account-id <id>', 'acquirer receiving account; "none" clears it'),
  ).action((merchantId: string, o: FeeOptions & { kycStatus?: string; status?: string; acquirerAccountId?: string }) =>
    run(async ({ merchants: svc }) => {
      const patch = input(updateMerchantBody, {
        kycStatus: o.kycStatus,
        status: o.status,
        acquirerAccountId: o.acquirerAccountId === 'none' ? null : o.acquirerAccountId,
        ...feeFields(o),
      });
      return { merchant: await svc.updateMerchant(CLI_ACTOR, merchantId, patch) };
    }),
  );

  merchants
    .command('revoke-tokens <merchantId>')
    .description("every login token (JWT) of the merchant's users stops working at once")
    .action((merchantId: string) => run(({ access }) => access.revokeMerchantTokens(CLI_ACTOR, merchantId)));
}

// docs/api.md "Auth hardening": disable users and revoke their login tokens.
function userCommands(program: Command): void {
  const users = program.command('users').description('list users, disable them, revoke their login tokens');
  users
    .command('list <merchantId>')
    .action((merchantId: string) => run(async ({ access }) => ({ users: await access.listMerchantUsers(merchantId) })));
  users
    .command('set-status <userId> <status>')
    .description('ACTIVE | DISABLED (disabled: 403 on every route and at login; also revokes tokens)')
    .action((userId: string, status: string) =>
      run(async ({ access }) => ({
        user: await access.setUserStatus(CLI_ACTOR, userId, input(updateUserBody, { status }).status),
      })),
    );
  users
    .command('revoke-tokens <userId>')
    .description('every login token (JWT) the user holds stops working at once')
    .action((userId: string) =>
      run(async ({ access }) => ({ user: await access.revokeUserTokens(CLI_ACTOR, userId) })),
    );
}

function pixKeyCommands(program: Command): void {
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
      run(async ({ merchants: svc }) => ({
        pixKey: await svc.setPixKeyStatus(CLI_ACTOR, merchantId, keyId, 'ACTIVE'),
      })),
    );
  pixKey
    .command('set-status <merchantId> <keyId> <status>')
    .action((merchantId: string, keyId: string, status: string) =>
      run(async ({ merchants: svc }) => {
        const body = input(updatePixKeyBody, { status });
        return { pixKey: await svc.setPixKeyStatus(CLI_ACTOR, merchantId, keyId, body.status) };
      }),
    );
}

function moneyCommands(program: Command): void {
  program
    .command('adjust <merchantId>')
    .description("signed adjustment of a merchant's available balance (credit > 0, debit < 0)")
    .requiredOption('--amount <cents>', 'signed integer cents', integer)
    .requiredOption('--reason <text>')
    .option('--idempotency-key <key>', 'the same key again replays the first adjustment instead of posting another')
    .action((merchantId: string, o: { amount: number; reason: string; idempotencyKey?: string }) =>
      run(({ merchants: svc }) =>
        svc.adjustBalance(
          CLI_ACTOR,
          merchantId,
          input(adjustmentBody, o),
          o.idempotencyKey === undefined ? undefined : input(idempotencyKeyHeader, o.idempotencyKey),
        ),
      ),
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

  // docs/operations.md "A merchant's statement": what the merchant sees at GET /v1/merchants/me/statement.
  program
    .command('statement <merchantId>')
    .description("a merchant's statement: ledger movements of a range of days with the balances after each")
    .option('--from <date>', 'first day, YYYY-MM-DD (America/Sao_Paulo); default 29 days before --to')
    .option('--to <date>', 'last day, inclusive; default today')
    .option('--page <n>')
    .option('--limit <n>')
    .option('--csv', 'the whole range as CSV on stdout instead of a page as JSON')
    .action((merchantId: string, o: { from?: string; to?: string; page?: string; limit?: string; csv?: boolean }) =>
      run(async ({ merchants: svc, statement }) => {
        const range = { from: o.from, to: o.to };
        // Validated before the merchant is looked up, as the API does; an unknown merchant fails.
        if (o.csv) {
          const q = input(statementCsvQuery, range);
          await svc.getProfile(merchantId);
          return statement.csv(merchantId, q).body;
        }
        const q = input(statementQuery, { ...range, page: o.page, limit: o.limit });
        await svc.getProfile(merchantId);
        return statement.page(merchantId, q);
      }),
    );
}

function callbackCommands(program: Command): void {
  const callbacks = program
    .command('callbacks')
    .description('the acquirer callback inbox: list, re-drive parked, reconcile');
  callbacks
    .command('list')
    .option('--status <status>', `${CALLBACK_STATUSES.join(' | ')} (default PARKED)`)
    .option('--kind <kind>', CALLBACK_KINDS.join(' | '))
    .option('--limit <n>', 'at most this many, newest first (default 100)', integer)
    .action((o: { status?: string; kind?: string; limit?: number }) =>
      run(async ({ knex }) => {
        const q = input(callbackListQuery, { status: o.status ?? 'PARKED', kind: o.kind, limit: o.limit });
        const inbox = createInboxOperations({ knex, logger: quietLogger() });
        return { callbacks: await inbox.list(q) };
      }),
    );
  callbacks
    .command('redrive [callbackIds...]')
    .option('--all-parked', 'every parked callback')
    .action((ids: string[], o: { allParked?: boolean }) =>
      run(async ({ knex }) => {
        if (!o.allParked && ids.length === 0) throw new InvalidArgumentError('give callback ids or --all-parked');
        const inbox = createInboxOperations({ knex, logger: quietLogger() });
        const progress = stderrProgress('ops');
        progress('callbacks: putting the parked callbacks back to RECEIVED');
        const redriven = await inbox.redrive(CLI_ACTOR, o.allParked ? 'all-parked' : ids);
        progress(`callbacks: ${redriven.length} re-driven; handing the due ones on`);
        const reconciled = await reconcileNow(knex);
        return { redriven, ...reconciled };
      }),
    );
  callbacks
    .command('reconcile')
    .description('hand on every due callback now (needs TEMPORAL_ADDRESS and ACQUIRER_URL)')
    .action(() =>
      run(async ({ knex }) => {
        const result = await reconcileNow(knex);
        if (!result.reconciledNow) throw new InvalidArgumentError(result.note);
        return result;
      }),
    );
}

// docs/operations.md "Operator cases": what a workflow left for an operator, and the operator's decision.
function caseCommands(program: Command): void {
  const cases = program.command('cases').description('operator cases: list, inspect, resolve');
  cases
    .command('list')
    .option('--status <status>', 'OPEN | RESOLVED (default OPEN)')
    .option('--kind <kind>', OPERATOR_CASE_KINDS.join(' | '))
    .option('--subject <id>', 'the cases of one infraction, withdrawal or charge (any status)')
    .option('--limit <n>', 'at most this many, oldest first (default 100)', integer)
    .action((o: { status?: string; kind?: string; subject?: string; limit?: number }) =>
      run(async ({ knex, logger }) => {
        const q = input(operatorCaseListQuery, {
          status: o.subject ? o.status : (o.status ?? 'OPEN'),
          kind: o.kind,
          subjectId: o.subject,
          limit: o.limit,
        });
        return { cases: await createOperatorCaseServices({ knex, logger }).list(q) };
      }),
    );
  cases
    .command('get <caseId>')
    .action((id: string) =>
      run(async ({ knex, logger }) => ({ case: await createOperatorCaseServices({ knex, logger }).get(id) })),
    );
  cases
    .command('resolve <caseId>')
    .requiredOption('--action <action>', OPERATOR_CASE_ACTIONS.join(' | '))
    .option('--note <text>', 'why (kept in the case and the audit log)')
    .description("apply an operator's decision; the subject's workflow picks it up (at once with TEMPORAL_ADDRESS set)")
    .action((id: string, o: { action: string; note?: string }) =>
      run(async ({ knex, logger, config }) => {
        const body = input(resolveOperatorCaseBody, o);
        return withWorkflowClients(config, async (workflows) => ({
          case: await createOperatorCaseServices({ knex, logger, workflows }).resolve(
            CLI_ACTOR,
            id,
            body.action,
            body.note,
          ),
        }));
      }),
    );
}

// docs/operations.md "Watching workflows": every money movement is a workflow; its history says what happened.
function workflowCommands(program: Command): void {
  const workflowsCmd = program
    .command('workflows')
    .description("list the deployment's workflows, show one's history (needs TEMPORAL_ADDRESS)");
  workflowsCmd
    .command('list')
    .option('--merchant <merchantId>', "one merchant's workflows (MerchantId search attribute)")
    .option('--status <status>', WORKFLOW_EXECUTION_STATUSES.join(' | '))
    .option('--type <type>', WORKFLOW_KINDS.join(' | '))
    .option('--limit <n>', 'at most this many, newest start first (default 50)', integer)
    .action((o: { merchant?: string; status?: string; type?: string; limit?: number }) => {
      const q = input(workflowListQuery, { merchantId: o.merchant, status: o.status, type: o.type, limit: o.limit });
      return runTemporal((client) => listWorkflows(client, q));
    });
  workflowsCmd
    .command('show <workflowId>')
    .option('--run <runId>', 'this run (default: the latest run of the workflow id)')
    .option('--json', 'the raw history as proto3 JSON (as the Temporal UI downloads it)')
    .description('the history of a run: time, event id, event type, activity/timer/signal, attempt, failure')
    .action(async (workflowId: string, o: { run?: string; json?: boolean }) => {
      const q = input(workflowShowQuery, { workflowId, runId: o.run });
      return runTemporal(async (client) => {
        const history = await fetchWorkflowHistory(client, q.workflowId, q.runId);
        return o.json ? historyAsJson(history) : formatHistoryTable(historyRows(history));
      });
    });
}

function ledgerCommands(program: Command): void {
  const ledger = program.command('ledger').description('inspect the ledger');
  ledger
    .command('check')
    .description('verify the ledger invariant (docs/operations.md "Checking the books"); exits 1 on any violation')
    .option('--merchant-id <id...>', 'limit the check to these merchants')
    .action((o: { merchantId?: string[] }) =>
      run(async ({ knex }) => {
        // Progress on stderr; the report (JSON) alone on stdout.
        const report = await checkLedgerInvariant(knex, { merchantIds: o.merchantId, progress: stderrProgress('ops') });
        // The report is printed either way; a broken ledger must also fail scripts that call this.
        if (!report.ok) process.exitCode = 1;
        return report;
      }),
    );
}

// docs/operations.md "Webhook secret encryption": after a new key is put first in WEBHOOK_SECRET_KEYS.
function webhookCommands(program: Command): void {
  program
    .command('webhooks')
    .description('webhook secrets at rest')
    .command('rotate-encryption-key')
    .description('re-encrypt every webhook secret under the first key of WEBHOOK_SECRET_KEYS')
    .action(() =>
      run(async ({ knex, config }) =>
        reencryptWebhookSecrets({ knex, secretKeys: config.WEBHOOK_SECRET_KEYS, actor: CLI_ACTOR }),
      ),
    );
}

const callbackListQuery = z.object({
  status: z.enum(CALLBACK_STATUSES),
  kind: z.enum(CALLBACK_KINDS).optional(),
  limit: z.int().min(1).max(1000).optional(),
});

const quietLogger = () => createLogger({ level: 'warn', destination: process.stderr });

/**
 * One reconciliation pass of the inbox from this process, against the deployment's Temporal and
 * acquirer. Without both configured it cannot hand anything on (an embedded `npm start` keeps its
 * Temporal server to itself): the API's reconciler will.
 */
async function reconcileNow(knex: Knex): Promise<{ reconciledNow: boolean; handedOn?: number; note: string }> {
  const config = loadConfig();
  if (!config.TEMPORAL_ADDRESS || !config.ACQUIRER_URL) {
    return {
      reconciledNow: false,
      note: "TEMPORAL_ADDRESS and ACQUIRER_URL are not both set: the API's reconciler hands the callbacks on",
    };
  }
  const logger = quietLogger();
  const temporal = await connectTemporalClient(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, {
    security: temporalSecurity(config),
  });
  const acquirer = await openAcquirer(config);
  try {
    const workflows = createWorkflowClients(temporal.client, config);
    const { inbox } = createCallbacks({ knex, workflows, logger, acquirer: acquirer.acquirer });
    const handedOn = await inbox.redriveDue();
    return { reconciledNow: true, handedOn, note: 'due callbacks handed on' };
  } finally {
    await acquirer.close();
    await temporal.close();
  }
}

/**
 * Runs `fn` with workflow clients of the deployment's Temporal when TEMPORAL_ADDRESS is set, else
 * without (the workflows then read the decision from the database on their next periodic check).
 */
async function withWorkflowClients<T>(
  config: Config,
  fn: (workflows: WorkflowClients | undefined) => Promise<T>,
): Promise<T> {
  const address = temporalAddressOf(config);
  if (!address) return fn(undefined);
  const temporal = await connectTemporalClient(address, config.TEMPORAL_NAMESPACE, {
    security: temporalSecurity(config),
  });
  try {
    return await fn(createWorkflowClients(temporal.client, config));
  } finally {
    await temporal.close();
  }
}

/**
 * The Temporal the service uses: TEMPORAL_ADDRESS, else the dev server of an `npm start` running
 * on the same DATA_DIR (it writes its address there while it runs).
 */
function temporalAddressOf(config: Config): string | undefined {
  return config.TEMPORAL_ADDRESS ?? readLocalAddress(config.DATA_DIR);
}

/** Runs `fn` against the deployment's Temporal and prints its result (a string as-is, anything else as JSON). */
async function runTemporal(fn: (client: Client) => Promise<unknown>): Promise<void> {
  const config = loadConfig();
  const address = temporalAddressOf(config);
  if (!address) {
    throw invalid(
      "No Temporal to ask: TEMPORAL_ADDRESS is not set and no `npm start` is running on this DATA_DIR. Give the address of the service's " +
        'Temporal server, e.g. TEMPORAL_ADDRESS=127.0.0.1:7233 npm run ops -- workflows list',
    );
  }
  const temporal = await connectTemporalClient(address, config.TEMPORAL_NAMESPACE, {
    security: temporalSecurity(config),
  }).catch((err: unknown) => {
    throw invalid(`Cannot reach Temporal at ${address}: ${errorMessage(err)}`);
  });
  try {
    const result = await fn(temporal.client);
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await temporal.close();
  }
}

async function main(): Promise<number> {
  try {
    await buildProgram().parseAsync(process.argv);
    return 0;
  } catch (err) {
    // Expected failures carry a message meant for people; anything else is reported as-is to the
    // operator's terminal (unlike the API, the CLI user is the operator).
    const message = errorMessage(err);
    process.stderr.write(`${JSON.stringify({ message })}\n`);
    return 1;
  }
}

if (require.main === module) {
  // Exit explicitly with the command's code (or the one an action set), whatever handles are still open.
  void main().then((code) => process.exit(code || (typeof process.exitCode === 'number' ? process.exitCode : 0)));
}
