/**
 * MED infractions for merchants (docs/api.md "Infractions"): list and read their own, submit the
 * one defense an infraction takes before its deadline, and download its files. The defense is
 * stored (text and files in one transaction, the infraction row locked) and its workflow told by
 * signal; the workflow sends it to the acquirer (src/services/med/defense-forwarding.ts), whose
 * analysis then arrives by its signed callback as today. Another merchant's infraction, defense or
 * file is 404.
 */
import type { Knex } from 'knex';
import { bindContext } from '../../lib/bind-context';
import type { Logger } from '../../lib/logger';
import { newId } from '../../lib/ids';
import { notFound, unprocessable, unsupportedFile, validationError } from '../../lib/errors';
import { assertPageWithinDepth, validate } from '../../contracts/validation';
import {
  DEFENSE_MAX_FILES,
  defenseFields,
  type ListInfractionsQuery,
  type defense as defenseContract,
  type infractionDetail,
} from '../../contracts/infractions';
import type { z } from 'zod';
import { infractionsStore, type Infraction } from '../../stores/infractions';
import {
  infractionDefensesStore,
  type DefenseFileMeta,
  type DefenseFileRow,
  type DefenseRow,
} from '../../stores/infraction-defenses';
import type { InfractionWorkflows } from '../../temporal/clients/infraction';
import type { InfractionAnalysisResult, InfractionStatus } from '../../contracts/statuses';
import { cleanFileName, sniffDefenseFileType } from './defense-files';
import { errorMessage } from '../../lib/error-message';

export type InfractionDetailView = z.infer<typeof infractionDetail>;
export type DefenseView = z.infer<typeof defenseContract>;

/** A defense as it arrives: the form's text fields and its files, unchecked. */
export interface DefenseSubmission {
  fields: Record<string, string[]>;
  files: Array<{ field: string; name: string | null; content: Buffer }>;
}

/** What the acquirer's analysis says, as merchants read it: the one mapping from status. */
export function analysisResultOf(status: InfractionStatus): InfractionAnalysisResult | null {
  if (status === 'ACCEPTED' || status === 'REFUNDED') return 'AGREED';
  return status === 'REJECTED' ? 'DISAGREED' : null;
}

const iso = (d: Date): string => new Date(d).toISOString();

function defenseView(d: DefenseRow, files: DefenseFileMeta[]): DefenseView {
  return {
    id: d.id,
    status: d.status,
    defense: d.defense,
    files: files.map((f) => ({ id: f.id, name: f.name, mimeType: f.mime_type, size: Number(f.size) })),
    createdAt: iso(d.created_at),
  };
}

function detailView(i: Infraction, defenses: DefenseView[]): InfractionDetailView {
  return {
    id: i.id,
    chargeId: i.chargeId,
    endToEndId: i.e2eId,
    amount: Number(i.amount),
    reason: i.reason,
    reportDetails: i.reportDetails,
    status: i.status,
    defenseDeadline: iso(i.defenseDeadline),
    blockedAmount: Number(i.blockedAmount),
    refundedAmount: i.status === 'REFUNDED' ? Number(i.refundAmount ?? 0) : 0,
    analysisResult: analysisResultOf(i.status),
    createdAt: iso(i.createdAt),
    updatedAt: iso(i.updatedAt),
    defenses,
  };
}

/** 422 unless the infraction still takes a defense: undecided, before its deadline, none yet. */
function assertDefensible(inf: Infraction, existing: DefenseRow | undefined): void {
  if (inf.status !== 'OPEN' || inf.acquirerStatus !== 'OPEN' || inf.closedAt)
    throw unprocessable('This infraction was already analysed: it takes no defense', 'infraction_closed');
  if (new Date(inf.defenseDeadline).getTime() <= Date.now())
    throw unprocessable(`The defense deadline (${iso(inf.defenseDeadline)}) has passed`, 'defense_deadline_passed');
  if (existing) throw unprocessable('This infraction already has its defense', 'defense_already_submitted');
}

/** The defense's text and files, checked: 400 for the text or the count, 415 for a file's content. */
function checkSubmission(s: DefenseSubmission) {
  const values = s.fields.defense ?? [];
  if (values.length > 1) throw validationError('defense must be sent once', 'defense');
  const { defense } = validate(defenseFields, { defense: values[0] }, 'Form');
  const stray = s.files.find((f) => f.field !== 'files');
  if (stray) throw validationError(`Files go in the field "files", not "${stray.field}"`, stray.field);
  if (s.files.length > DEFENSE_MAX_FILES)
    throw validationError(`files must have at most ${DEFENSE_MAX_FILES} items`, 'files');
  const files = s.files.map((f, i) => {
    const mimeType = sniffDefenseFileType(f.content);
    if (!mimeType) throw unsupportedFile(`files[${i}] is not a PDF, PNG or JPEG (told by its content)`, `files[${i}]`);
    return { id: newId('dff'), name: cleanFileName(f.name, `file-${i + 1}`), mimeType, content: f.content };
  });
  return { defense, files };
}

type DefensesCtx = { knex: Knex; workflows: InfractionWorkflows; logger: Logger };

export function createInfractionDefenses(deps: { knex: Knex; workflows: InfractionWorkflows; logger: Logger }) {
  return bindContext(deps, { list, get, checkDefensible, submit, file });
}

async function views(ctx: DefensesCtx, rows: Infraction[]): Promise<InfractionDetailView[]> {
  const { knex } = ctx;
  const store = infractionDefensesStore(knex);
  const defenses = await store.ofInfractions(rows.map((r) => r.id));
  const files = await store.filesOf(defenses.map((d) => d.id));
  return rows.map((r) =>
    detailView(
      r,
      defenses
        .filter((d) => d.infraction_id === r.id)
        .map((d) =>
          defenseView(
            d,
            files.filter((f) => f.defense_id === d.id),
          ),
        ),
    ),
  );
}

export async function list(ctx: DefensesCtx, merchantId: string, q: ListInfractionsQuery) {
  const { knex } = ctx;
  const offset = (q.page - 1) * q.limit;
  const { rows, total } = await infractionsStore(knex).pageForMerchant(merchantId, {
    status: q.status,
    limit: q.limit,
    offset,
  });
  assertPageWithinDepth(q.page, q.limit, total);
  return { page: q.page, limit: q.limit, total, infractions: await views(ctx, rows) };
}

async function own(ctx: DefensesCtx, merchantId: string, id: string): Promise<Infraction> {
  const { knex } = ctx;
  const inf = await infractionsStore(knex).findForMerchant(merchantId, id);
  if (!inf) throw notFound('Infraction not found');
  return inf;
}

export async function get(ctx: DefensesCtx, merchantId: string, id: string): Promise<InfractionDetailView> {
  const [view] = await views(ctx, [await own(ctx, merchantId, id)]);
  return view as InfractionDetailView;
}

/** Before the upload is read: 404 for another merchant's, 422 when it takes no defense. */
export async function checkDefensible(ctx: DefensesCtx, merchantId: string, id: string): Promise<void> {
  const { knex } = ctx;
  const inf = await own(ctx, merchantId, id);
  assertDefensible(inf, await infractionDefensesStore(knex).forInfraction(id));
}

export async function submit(
  ctx: DefensesCtx,
  merchantId: string,
  id: string,
  s: DefenseSubmission,
): Promise<DefenseView> {
  const { knex, workflows, logger } = ctx;
  const checked = checkSubmission(s);
  const stored = await knex.transaction(async (trx) => {
    const inf = await infractionsStore(trx).find(id, { lock: true });
    if (!inf || inf.merchantId !== merchantId) throw notFound('Infraction not found');
    const defenses = infractionDefensesStore(trx);
    assertDefensible(inf, await defenses.forInfraction(id));
    const row = await defenses.insert({
      id: newId('dfs'),
      infractionId: id,
      merchantId,
      defense: checked.defense,
      files: checked.files,
    });
    return { row, files: await defenses.filesOf([row.id]) };
  });
  // Stored: the merchant gets its 201 even if Temporal cannot take the signal now; the reconciler
  // wakes the workflow of every open infraction whose defense is still PENDING.
  try {
    await workflows.defenseSubmitted({ id, merchantId });
  } catch (err) {
    logger.error({ infractionId: id, err: errorMessage(err) }, 'infraction workflow not told of its defense');
  }
  return defenseView(stored.row, stored.files);
}

/** One file of the merchant's own defense; anything else is 404. */
export async function file(
  ctx: DefensesCtx,
  merchantId: string,
  ids: { infractionId: string; defenseId: string; fileId: string },
): Promise<DefenseFileRow> {
  const { knex } = ctx;
  const row = await infractionDefensesStore(knex).fileForMerchant(merchantId, ids);
  if (!row) throw notFound('File not found');
  return row;
}

export type InfractionDefenses = ReturnType<typeof createInfractionDefenses>;
