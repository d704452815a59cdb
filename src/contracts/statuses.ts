/**
 * Every status list of pixflow, defined once: the request schemas, the OpenAPI document, the
 * models and stores, the workflows' types and the ops CLI import them from here.
 */

export const CHARGE_STATUSES = ['PENDING', 'PAID', 'FAILED', 'CANCELED', 'REFUNDED'] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

/**
 * What kind of charge (docs/api.md "Charges"): IMMEDIATE a BCB cob (pay now, `expiresIn`); DUE_DATE
 * a cobv (a due date, fine, interest, discount); RECURRING a Pix Automático cycle's cobr.
 */
export const CHARGE_TYPES = ['IMMEDIATE', 'DUE_DATE', 'RECURRING'] as const;
export type ChargeType = (typeof CHARGE_TYPES)[number];

export const WITHDRAWAL_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED', 'REFUNDED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** A transfer at the acquirer, as its callbacks and GET /transfers/:id say. */
export const TRANSFER_STATUSES = ['PROCESSING', 'COMPLETED', 'REJECTED', 'RETURNED'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const WEBHOOK_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const INFRACTION_STATUSES = ['OPEN', 'ACCEPTED', 'REJECTED', 'REFUNDED'] as const;
export type InfractionStatus = (typeof INFRACTION_STATUSES)[number];

/**
 * A merchant's defense of an infraction: PENDING until the acquirer has it, then DEFENDED; REFUSED
 * when the acquirer would not take it (its analysis came first, or it refused the request for good).
 */
export const DEFENSE_STATUSES = ['PENDING', 'DEFENDED', 'REFUSED'] as const;
export type DefenseStatus = (typeof DEFENSE_STATUSES)[number];

/**
 * The acquirer's analysis of an infraction as merchants read it (docs/api.md "Infractions"): AGREED
 * (the infraction stands: ACCEPTED or REFUNDED) or DISAGREED (REJECTED); none while OPEN.
 */
export const INFRACTION_ANALYSIS_RESULTS = ['AGREED', 'DISAGREED'] as const;
export type InfractionAnalysisResult = (typeof INFRACTION_ANALYSIS_RESULTS)[number];

/** What a defense's evidence may be, recognised by content (src/services/med/defense-files.ts). */
export const DEFENSE_FILE_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type DefenseFileType = (typeof DEFENSE_FILE_TYPES)[number];

/** An infraction's operator step: a case waiting (`pending`), or the decision not yet applied. */
export const INFRACTION_OPERATOR_ACTIONS = ['pending', 'retry', 'release'] as const;
export type InfractionOperatorAction = (typeof INFRACTION_OPERATOR_ACTIONS)[number];

export const PIX_KEY_STATUSES = ['PENDING', 'ACTIVE', 'INACTIVE'] as const;
export type PixKeyStatus = (typeof PIX_KEY_STATUSES)[number];

export const MERCHANT_STATUSES = ['ACTIVE', 'SUSPENDED'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

export const KYC_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

export const USER_STATUSES = ['ACTIVE', 'DISABLED'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** A webhook delivery: PENDING while attempts remain, then one of the three final states. */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** A user's role: a merchant's USER, or an ADMIN operator (no merchant). */
export const USER_ROLES = ['USER', 'ADMIN'] as const;
export type Role = (typeof USER_ROLES)[number];

/** A refund of a charge (charge_refunds): REQUESTED at the acquirer until it settles. */
export const REFUND_STATUSES = ['REQUESTED', 'CONFIRMED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * Why a charge is refunded: MERCHANT asked by the merchant; UNPAYABLE_PAYMENT a payment the charge
 * could not take; INFRACTION returned to the payer under a MED infraction.
 */
export const REFUND_KINDS = ['MERCHANT', 'UNPAYABLE_PAYMENT', 'INFRACTION'] as const;
export type RefundKind = (typeof REFUND_KINDS)[number];

/**
 * How a refund shows on its charge (GET /v1/charges/:id `refunds[].kind`): MERCHANT asked by the
 * merchant; MED returned to the payer under a MED infraction (the stored kind INFRACTION). A
 * payment the charge could not take (UNPAYABLE_PAYMENT) is not a refund of the charge's payment.
 */
export const CHARGE_REFUND_VIEW_KINDS = ['MERCHANT', 'MED'] as const;
export type ChargeRefundViewKind = (typeof CHARGE_REFUND_VIEW_KINDS)[number];

/**
 * A line of the merchant's statement (docs/api.md "Statement"), one per ledger movement of its
 * balances: a payment (CHARGE_PAID) and its fee (FEE), the settlement pending → available, a
 * withdrawal and its money coming back (failed or returned transfer), a merchant refund and its
 * money coming back, a MED block, its release, its refund to the payer, an operator's adjustment.
 */
export const STATEMENT_ENTRY_TYPES = [
  'CHARGE_PAID',
  'FEE',
  'SETTLEMENT',
  'WITHDRAWAL',
  'WITHDRAWAL_RESTORED',
  'REFUND',
  'REFUND_RESTORED',
  'MED_BLOCK',
  'MED_RELEASE',
  'MED_REFUND',
  'ADJUSTMENT',
] as const;
export type StatementEntryType = (typeof STATEMENT_ENTRY_TYPES)[number];

/** An acquirer callback in the inbox (acquirer_callbacks): RECEIVED until applied or parked. */
export const CALLBACK_STATUSES = ['RECEIVED', 'APPLIED', 'PARKED'] as const;
export type CallbackStatus = (typeof CALLBACK_STATUSES)[number];

/** What an inbox callback is about: the acquirer's callback routes, a refund outcome split from `pix`. */
export const CALLBACK_KINDS = ['pix', 'refund', 'transfers', 'infractions', 'pix-keys'] as const;
export type CallbackKind = (typeof CALLBACK_KINDS)[number];

/** The acquirer's wire enumerations (BACEN API Pix names): a cob, a devolução, a DICT key at the acquirer. */
export const COB_STATUSES = ['ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP'] as const;
export type CobStatus = (typeof COB_STATUSES)[number];
export const DEVOLUCAO_STATUSES = ['EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO'] as const;
export type DevolucaoStatus = (typeof DEVOLUCAO_STATUSES)[number];
/** The final outcomes of a devolução. */
export const DEVOLUCAO_OUTCOMES = ['DEVOLVIDO', 'NAO_REALIZADO'] as const satisfies readonly DevolucaoStatus[];
export type DevolucaoOutcome = (typeof DEVOLUCAO_OUTCOMES)[number];
export const ACQUIRER_PIX_KEY_STATUSES = ['PENDENTE', 'ATIVA', 'INATIVA'] as const;
export type PixKeyStatusAtAcquirer = (typeof ACQUIRER_PIX_KEY_STATUSES)[number];

/**
 * An operator case (docs/operations.md "Operator cases"): money or a decision an operator must look at,
 * opened by a workflow instead of only a log line. OPEN until an operator resolves it.
 */
export const OPERATOR_CASE_STATUSES = ['OPEN', 'RESOLVED'] as const;
export type OperatorCaseStatus = (typeof OPERATOR_CASE_STATUSES)[number];

/**
 * What the case is about:
 * - MED_NOTHING_TO_RETURN: an accepted infraction found none of the merchant's money to return;
 * - MED_SHORTFALL: its devolução returns less than the payer is owed (the remainder is the case);
 * - MED_REFUND_REFUSED: the acquirer refused or could not complete the devolução (money re-blocked);
 * - MED_REFUND_UNKNOWN: the devolução's outcome cannot be learnt (money kept in transit, still asked);
 * - TRANSFER_CONTRADICTION: a transfer outcome that contradicts the one already applied;
 * - REFUND_CONTRADICTION: a devolução the acquirer settled (DEVOLVIDO) after its refund was FAILED;
 * - EXPIRY_ACQUIRER_UNREACHABLE: a charge due to expire whose cob the acquirer cannot be asked about;
 * - WEBHOOK_SECRET_UNAVAILABLE: a delivery stopped FAILED because its webhook's secret cannot be decrypted.
 */
export const OPERATOR_CASE_KINDS = [
  'MED_NOTHING_TO_RETURN',
  'MED_SHORTFALL',
  'MED_REFUND_REFUSED',
  'MED_REFUND_UNKNOWN',
  'TRANSFER_CONTRADICTION',
  'REFUND_CONTRADICTION',
  'EXPIRY_ACQUIRER_UNREACHABLE',
  'WEBHOOK_SECRET_UNAVAILABLE',
] as const;
export type OperatorCaseKind = (typeof OPERATOR_CASE_KINDS)[number];

/** What an operator may decide on a case; which ones a kind accepts is the service's rule. */
export const OPERATOR_CASE_ACTIONS = ['acknowledge', 'retry', 'release'] as const;
export type OperatorCaseAction = (typeof OPERATOR_CASE_ACTIONS)[number];

/**
 * A Temporal workflow execution's status, spelled as visibility queries spell it (README "Commands",
 * `workflows list --status`): what `ExecutionStatus = '…'` accepts and what the list prints.
 */
export const WORKFLOW_EXECUTION_STATUSES = [
  'Running',
  'Completed',
  'Failed',
  'Canceled',
  'Terminated',
  'ContinuedAsNew',
  'TimedOut',
] as const;
export type WorkflowExecutionStatus = (typeof WORKFLOW_EXECUTION_STATUSES)[number];

/** The kinds of workflow the worker runs, as operators name them (`workflows list --type`). */
export const WORKFLOW_KINDS = ['charge', 'withdrawal', 'infraction', 'webhook-delivery', 'pix-key'] as const;
export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];

/**
 * Pix Automático at the acquirer (BACEN API Pix names): a recorrência (`rec`), its confirmation
 * request (`solicrec`), a recurring charge (`cobr`) and each debit attempt (`tentativas`).
 */
export const REC_STATUSES = ['CRIADA', 'APROVADA', 'REJEITADA', 'EXPIRADA', 'CANCELADA'] as const;
export type RecStatus = (typeof REC_STATUSES)[number];
export const SOLICREC_STATUSES = [
  'CRIADA',
  'ENVIADA',
  'RECEBIDA',
  'REJEITADA',
  'ACEITA',
  'EXPIRADA',
  'CANCELADA',
] as const;
export type SolicRecStatus = (typeof SOLICREC_STATUSES)[number];
export const COBR_STATUSES = ['CRIADA', 'ATIVA', 'CONCLUIDA', 'EXPIRADA', 'REJEITADA', 'CANCELADA'] as const;
export type CobRStatus = (typeof COBR_STATUSES)[number];
export const COBR_ATTEMPT_STATUSES = ['SOLICITADA', 'AGENDADA', 'PAGA', 'CANCELADA', 'REJEITADA', 'EXPIRADA'] as const;
export type CobRAttemptStatus = (typeof COBR_ATTEMPT_STATUSES)[number];
/** `periodicidade` and `politicaRetentativa` of a recorrência. */
export const REC_PERIODICITIES = ['SEMANAL', 'MENSAL', 'TRIMESTRAL', 'SEMESTRAL', 'ANUAL'] as const;
export type RecPeriodicity = (typeof REC_PERIODICITIES)[number];
export const REC_RETRY_POLICIES = ['NAO_PERMITE', 'PERMITE_3R_7D'] as const;
export type RecRetryPolicy = (typeof REC_RETRY_POLICIES)[number];

/** A subscription (Pix Automático recurrence) as merchants see it, and each of its cycles. */
export const SUBSCRIPTION_STATUSES = [
  'PENDING_APPROVAL',
  'ACTIVE',
  'CANCELED',
  'REFUSED',
  'EXPIRED',
  'COMPLETED',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
/** SCHEDULED: a variable cycle's amount set ahead, no cobr yet; SKIPPED: a variable cycle with none set (docs/api.md "Variable amounts"). */
export const SUBSCRIPTION_CYCLE_STATUSES = ['SCHEDULED', 'PENDING', 'PAID', 'FAILED', 'CANCELED', 'SKIPPED'] as const;
export type SubscriptionCycleStatus = (typeof SUBSCRIPTION_CYCLE_STATUSES)[number];
/** A cycle not yet ended: PENDING (its cobr exists) or SCHEDULED (a variable amount set ahead); a cancel ends both. */
export const OPEN_CYCLE_STATUSES = ['PENDING', 'SCHEDULED'] as const satisfies readonly SubscriptionCycleStatus[];
export const SUBSCRIPTION_PERIODICITIES = ['WEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY'] as const;
export type SubscriptionPeriodicity = (typeof SUBSCRIPTION_PERIODICITIES)[number];
export const SUBSCRIPTION_RETRY_POLICIES = ['NONE', 'THREE_IN_SEVEN_DAYS'] as const;
export type SubscriptionRetryPolicy = (typeof SUBSCRIPTION_RETRY_POLICIES)[number];
