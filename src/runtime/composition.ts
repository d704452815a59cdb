/**
 * The composition root: every service of pixflow is built here, from its explicit dependencies
 * (knex, config, logger, the acquirer, the Temporal workflow clients). The API process
 * (src/runtime/processes.ts `startApi`), the worker (`startWorker`, through activities/index.ts) and
 * the ops CLI (src/cli/ops.ts) all take their services from these functions, so a service is wired
 * the same way wherever it runs. See docs/architecture.md "Layers".
 */
import type { Knex } from 'knex';
import type { AppConfig, Config } from '../config';
import type { Logger } from '../lib/logger';
import type { Acquirer } from '../acquirer/types';
import type { AcquirerHandle } from '../acquirer';
import { createApiKeysService } from '../services/accounts/api-keys';
import { createAuthService } from '../services/accounts/auth';
import { createDashboardSessions } from '../services/accounts/dashboard-sessions';
import { createMerchantsService, type CreatedPixKey } from '../services/accounts/merchants';
import { createUserAccessService } from '../services/accounts/user-access';
import { createStatementService } from '../services/ledger/statement';
import { createAuditLogService } from '../services/platform/audit';
import { healthStore } from '../stores/health';
import { createChargesService } from '../services/charges/charges';
import { createDueDateCharges } from '../services/charges/due-date';
import { createChargeBatches } from '../services/charges/batches';
import { createChargeSandbox } from '../services/charges/sandbox';
import { createWithdrawalsService } from '../services/withdrawals/withdrawals';
import { createWithdrawalCallbackHandler } from '../services/withdrawals/callbacks';
import { createWithdrawalSandbox } from '../services/withdrawals/sandbox';
import { createWebhooksService } from '../services/webhooks/webhooks';
import { createWebhookDispatcher } from '../services/webhooks/dispatcher';
import { createAcquirerCallbacks } from '../services/inbox/acquirer-callbacks';
import { createCallbackInbox } from '../services/inbox/callback-inbox';
import { createInfractionCallbacks } from '../services/med/callbacks';
import { createPixKeyCallbacks } from '../services/pix-keys/callbacks';
import { createMedCallbackHandlers } from '../services/med/callback-handlers';
import { createPixKeyRegistration } from '../services/pix-keys/pix-keys';
import { createInfractionSandbox } from '../services/med/sandbox';
import { createInfractionDefenses } from '../services/med/defenses';
import { createPixKeySandbox } from '../services/pix-keys/sandbox';
import { createSubscriptionSandbox } from '../services/subscriptions/sandbox';
import { createChargeLifecycle } from '../services/charges/lifecycle';
import { createSubscriptionLifecycle } from '../services/subscriptions/lifecycle';
import { createSubscriptionsService } from '../services/subscriptions/subscriptions';
import { createWithdrawalLifecycle } from '../services/withdrawals/lifecycle';
import { createInfractionLifecycle } from '../services/med/lifecycle';
import { infractionCaseResolvers } from '../services/med/cases';
import { chargeCaseResolvers } from '../services/charges/cases';
import { createOperatorCases } from '../services/platform/operator-cases';
import { createWebhookDelivery, type WebhookDeliverySettings } from '../services/webhooks/delivery';
import type { WorkflowClients } from '../temporal/workflow-clients';
import type { WebhookDeliveryWorkflows } from '../temporal/clients/webhook';
import { activitiesOver, type Activities } from '../../activities';

/** Accounts and operators: login (and the dashboard's session over it), API keys, merchants (users, PIX keys, statement), user access. */
export function createAccountServices(deps: {
  knex: Knex;
  config: AppConfig;
  logger: Logger;
  /** Starts PIX key registration at the acquirer (the `pixkey-<id>` workflow). */
  onPixKeyCreated?: (pixKey: CreatedPixKey) => Promise<void>;
}) {
  const { knex, config, logger } = deps;
  const auth = createAuthService({ knex, config });
  return {
    auth,
    /** The dashboard's sign-in over the same login and limits (docs/dashboard.md "How the session is kept safe"). */
    dashboardSessions: createDashboardSessions({ auth, config }),
    apiKeys: createApiKeysService({ knex, config }),
    merchants: createMerchantsService({ knex, config, logger, onPixKeyCreated: deps.onPixKeyCreated }),
    statement: createStatementService({ knex }),
    userAccess: createUserAccessService({ knex }),
    auditLog: createAuditLogService({ knex }),
    health: { database: () => healthStore(knex).ping() },
  };
}

export type AccountServices = ReturnType<typeof createAccountServices>;

export { createWorkflowClients, type WorkflowClients } from '../temporal/workflow-clients';

/**
 * The acquirer callbacks with every feature's handler (payments and refunds built in; transfers,
 * infractions, PIX keys): the API's routes and the ops CLI's `callbacks reconcile` share it.
 */
export function createCallbacks(deps: { knex: Knex; logger: Logger; acquirer: Acquirer; workflows: WorkflowClients }) {
  const { knex, logger, acquirer, workflows } = deps;
  return createAcquirerCallbacks({
    knex,
    workflows: workflows.charges,
    logger,
    acquirer,
    handlers: {
      transfers: createWithdrawalCallbackHandler({ knex, logger, workflows: workflows.withdrawals }),
      ...createMedCallbackHandlers({
        infractions: createInfractionCallbacks({ knex, workflows: workflows.infractions, logger }),
        pixKeys: createPixKeyCallbacks({ registration: createPixKeyRegistration({ knex, acquirer, logger }) }),
      }),
    },
  });
}

/**
 * The callback inbox without handlers, for the ops CLI's `callbacks list` and `callbacks redrive`
 * (listing and re-driving need no handler; the API's reconciler hands callbacks on).
 */
export function createInboxOperations(deps: { knex: Knex; logger: Logger }) {
  return createCallbackInbox({ knex: deps.knex, logger: deps.logger, handlers: {} });
}

/** The payment side of the API: charges, withdrawals, infractions, webhooks, callbacks and (simulator only) the sandbox. */
export function createPaymentServices(deps: {
  knex: Knex;
  config: Config;
  logger: Logger;
  acquirer: AcquirerHandle;
  workflows: WorkflowClients;
}) {
  const { knex, config, logger, workflows } = deps;
  const acquirer = deps.acquirer.acquirer;
  const charges = createChargesService({ knex, config, logger, acquirer, workflows: workflows.charges });
  const dueDateCharges = createDueDateCharges({
    knex,
    logger,
    acquirer,
    workflows: workflows.charges,
    onWrite: charges.dropListCache,
  });
  const withdrawals = createWithdrawalsService({ knex, logger, workflows: workflows.withdrawals });
  const subscriptions = createSubscriptionsService({ knex, acquirer, logger, workflows: workflows.subscriptions });
  const simulator = deps.acquirer.sandbox;
  return {
    charges,
    /** Due-date charges and their batches (docs/api.md "Due-date charges"). */
    dueDate: {
      charges: dueDateCharges,
      batches: createChargeBatches({ knex, logger, acquirer, dueDate: dueDateCharges }),
    },
    withdrawals,
    subscriptions,
    webhooks: createWebhooksService({ knex, config }),
    /** MED infractions for merchants: list, read, defend (docs/api.md "Infractions"). */
    infractions: createInfractionDefenses({ knex, workflows: workflows.infractions, logger }),
    /** Starts the workflows of committed webhook deliveries. */
    webhookDispatcher: createWebhookDispatcher({ knex, logger, workflows: workflows.webhookDeliveries }),
    // Pix Automático's rec and cobr callbacks go to the subscriptions (docs/api.md "Subscriptions").
    callbacks: Object.assign(createCallbacks({ knex, logger, acquirer, workflows }), {
      recurrences: subscriptions.callbacks,
    }),
    sandbox: simulator
      ? {
          charges: createChargeSandbox({ charges, simulator }),
          withdrawals: createWithdrawalSandbox({ knex, withdrawals, simulator }),
          infractions: createInfractionSandbox({ knex, simulator }),
          pixKeys: createPixKeySandbox({ knex, simulator }),
          subscriptions: createSubscriptionSandbox({ knex, simulator }),
        }
      : undefined,
  };
}

export type PaymentServices = ReturnType<typeof createPaymentServices>;

/**
 * Operator cases (docs/operations.md "Operator cases") with each domain's resolver. `workflows`, when given,
 * wakes the subject's workflow after a decision; without it the workflow finds the decision on its
 * next periodic check.
 */
export function createOperatorCaseServices(deps: { knex: Knex; logger: Logger; workflows?: WorkflowClients }) {
  const { knex, logger, workflows } = deps;
  return createOperatorCases({
    knex,
    logger,
    resolvers: {
      ...infractionCaseResolvers({ workflows: workflows?.infractions }),
      ...chargeCaseResolvers({ workflows: workflows?.charges }),
    },
  });
}

/** What the worker's activities wrap: the workflow side of each feature. */
export function createWorkerServices(deps: {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  webhooks?: WebhookDeliverySettings;
  /**
   * Starts a payment's webhook deliveries right after its commit (docs/performance.md "Payment
   * to webhook: the timeline"); without it the API's dispatcher starts them.
   */
  webhookDeliveries?: WebhookDeliveryWorkflows;
}) {
  const { knex, logger, acquirer, webhookDeliveries } = deps;
  const chargeLifecycle = createChargeLifecycle({ knex, acquirer, logger, webhookDeliveries });
  return {
    chargeLifecycle,
    webhookDelivery: createWebhookDelivery({ knex, logger, settings: deps.webhooks }),
    withdrawalLifecycle: createWithdrawalLifecycle({ knex, acquirer, logger }),
    infractionLifecycle: createInfractionLifecycle({ knex, acquirer, logger }),
    pixKeyRegistration: createPixKeyRegistration({ knex, acquirer, logger }),
    subscriptionLifecycle: createSubscriptionLifecycle({ knex, acquirer, logger, charges: chargeLifecycle }),
  };
}

export type WorkerServices = ReturnType<typeof createWorkerServices>;

/** Every activity the worker registers, over the worker's services. */
export function createActivities(deps: {
  knex: Knex;
  logger: Logger;
  acquirer: Acquirer;
  /** Webhook delivery settings (timeouts, retry delays, address rule); defaults of docs/production.md "Configuration" if absent. */
  webhooks?: WebhookDeliverySettings;
  /** The worker's delivery client: a payment's deliveries start after its commit (`createWorkerServices`). */
  webhookDeliveries?: WebhookDeliveryWorkflows;
}): Activities {
  return activitiesOver(createWorkerServices(deps));
}
