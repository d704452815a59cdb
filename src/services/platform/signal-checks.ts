/**
 * A workflow signal the source of truth does not bear out (docs/architecture.md "Workflows carry
 * intent; activities check facts"): anyone who can reach Temporal can send one, so the activity
 * that checks it records it for operators (audit `signal.unconfirmed`) and counts it
 * (`pixflow_signals_unconfirmed_total`); what it claimed is never applied.
 */
import type { Db } from '../../db/types';
import type { Logger } from '../../lib/logger';
import { recordSignalUnconfirmed, type SignalVerdict } from '../../observability/metrics';
import { recordAudit, type Actor } from './audit';

/** Who writes these entries in the audit log. */
export const SIGNAL_CHECK_ACTOR: Actor = { userId: null, email: 'system:signal-check' };

export interface UnconfirmedSignal {
  workflow: 'charge' | 'withdrawal' | 'infraction';
  signal: string;
  /** `no_source`: neither a signed callback nor the acquirer knows it; `disagrees`: they say otherwise. */
  verdict: SignalVerdict;
  subjectType: string;
  subjectId: string;
  merchantId: string;
  /** What the signal said. */
  claimed: unknown;
  /** What the source says (null when none holds it). */
  source: unknown;
}

export async function recordUnconfirmedSignal(db: Db, logger: Logger, s: UnconfirmedSignal): Promise<void> {
  await recordAudit(db, SIGNAL_CHECK_ACTOR, {
    action: 'signal.unconfirmed',
    targetType: s.subjectType,
    targetId: s.subjectId,
    details: {
      workflow: s.workflow,
      signal: s.signal,
      verdict: s.verdict,
      merchantId: s.merchantId,
      claimed: s.claimed,
      source: s.source,
    },
  });
  recordSignalUnconfirmed(s.workflow, s.signal, s.verdict);
  logger.warn(
    { workflow: s.workflow, signal: s.signal, verdict: s.verdict, subjectId: s.subjectId },
    'signal not borne out by the source of truth: nothing applied',
  );
}
