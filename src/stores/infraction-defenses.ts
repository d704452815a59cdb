/**
 * Merchants' defenses of MED infractions and their evidence files (docs/api.md "Infractions"):
 * one defense per infraction (a unique key), its files as bytea rows beside it. Every read a
 * merchant makes is scoped to that merchant. What a defense may be is the service's rule
 * (src/services/med/defenses.ts); forwarding it to the acquirer is the workflow's
 * (src/services/med/defense-forwarding.ts).
 */
import type { Db } from '../db/types';
import type { DefenseFileType, DefenseStatus } from '../contracts/statuses';
import { bindContext } from '../lib/bind-context';

export interface DefenseRow {
  id: string;
  infraction_id: string;
  merchant_id: string;
  defense: string;
  status: DefenseStatus;
  acquirer_defense_id: string | null;
  forwarded_at: Date | null;
  created_at: Date;
}

/** A file without its bytes (what lists and answers show). */
export interface DefenseFileMeta {
  id: string;
  defense_id: string;
  name: string;
  mime_type: DefenseFileType;
  size: number;
}

export interface DefenseFileRow extends DefenseFileMeta {
  content: Buffer;
}

export interface NewDefense {
  id: string;
  infractionId: string;
  merchantId: string;
  defense: string;
  files: Array<{ id: string; name: string; mimeType: DefenseFileType; content: Buffer }>;
}

const META = ['id', 'defense_id', 'name', 'mime_type', 'size'] as const;

export const infractionDefensesStore = (db: Db) =>
  bindContext(db, {
    insert,
    forInfraction,
    ofInfractions,
    filesOf,
    filesWithContent,
    fileForMerchant,
    markDefended,
    markRefused,
    pendingOnOpenInfractions,
  });

/** Inserts the defense and its files; the caller's transaction holds the infraction row. */
export async function insert(db: Db, d: NewDefense): Promise<DefenseRow> {
  const [row] = (await db('infraction_defenses')
    .insert({ id: d.id, infraction_id: d.infractionId, merchant_id: d.merchantId, defense: d.defense })
    .returning('*')) as DefenseRow[];
  if (d.files.length > 0) {
    await db('infraction_defense_files').insert(
      d.files.map((f, position) => ({
        id: f.id,
        defense_id: d.id,
        merchant_id: d.merchantId,
        position,
        name: f.name,
        mime_type: f.mimeType,
        size: f.content.length,
        content: f.content,
      })),
    );
  }
  return row as DefenseRow;
}

export async function forInfraction(db: Db, infractionId: string): Promise<DefenseRow | undefined> {
  return (await db('infraction_defenses').where({ infraction_id: infractionId }).first()) as DefenseRow | undefined;
}

/** The defenses of these infractions, oldest first. */
export async function ofInfractions(db: Db, infractionIds: string[]): Promise<DefenseRow[]> {
  if (infractionIds.length === 0) return [];
  return (await db('infraction_defenses')
    .whereIn('infraction_id', infractionIds)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as DefenseRow[];
}

/** The files of these defenses, without their bytes, in the order they were sent. */
export async function filesOf(db: Db, defenseIds: string[]): Promise<DefenseFileMeta[]> {
  if (defenseIds.length === 0) return [];
  return (await db('infraction_defense_files')
    .whereIn('defense_id', defenseIds)
    .orderBy([{ column: 'defense_id' }, { column: 'position' }])
    .select(...META)) as DefenseFileMeta[];
}

/** The files of one defense with their bytes (what the acquirer is sent). */
export async function filesWithContent(db: Db, defenseId: string): Promise<DefenseFileRow[]> {
  return (await db('infraction_defense_files')
    .where({ defense_id: defenseId })
    .orderBy('position')
    .select(...META, 'content')) as DefenseFileRow[];
}

/** One file of one merchant's defense of one infraction; anything else is undefined (404). */
export async function fileForMerchant(
  db: Db,
  merchantId: string,
  ids: { infractionId: string; defenseId: string; fileId: string },
): Promise<DefenseFileRow | undefined> {
  return (await db('infraction_defense_files as f')
    .join('infraction_defenses as d', 'd.id', 'f.defense_id')
    .where({
      'f.id': ids.fileId,
      'f.merchant_id': merchantId,
      'd.id': ids.defenseId,
      'd.infraction_id': ids.infractionId,
      'd.merchant_id': merchantId,
    })
    .first('f.id', 'f.defense_id', 'f.name', 'f.mime_type', 'f.size', 'f.content')) as DefenseFileRow | undefined;
}

/** PENDING → DEFENDED with the acquirer's id for it, once. */
export async function markDefended(db: Db, id: string, acquirerDefenseId: string): Promise<boolean> {
  const n = await db('infraction_defenses').where({ id, status: 'PENDING' }).update({
    status: 'DEFENDED',
    acquirer_defense_id: acquirerDefenseId,
    forwarded_at: db.fn.now(),
    updated_at: db.fn.now(),
  });
  return n > 0;
}

/** PENDING → REFUSED with the reason, once. */
export async function markRefused(db: Db, id: string, reason: string): Promise<boolean> {
  const n = await db('infraction_defenses')
    .where({ id, status: 'PENDING' })
    .update({ status: 'REFUSED', refusal_reason: reason.slice(0, 500), updated_at: db.fn.now() });
  return n > 0;
}

/**
 * Open infractions whose defense still waits to be forwarded, oldest first (the reconciler wakes
 * their workflows: a signal lost while Temporal was away must not leave a defense behind).
 */
export async function pendingOnOpenInfractions(
  db: Db,
  limit: number,
): Promise<Array<{ id: string; merchant_id: string }>> {
  return (await db('infraction_defenses as d')
    .join('infractions as i', 'i.id', 'd.infraction_id')
    .where({ 'd.status': 'PENDING', 'i.status': 'OPEN' })
    .whereNull('i.closed_at')
    .orderBy('d.created_at')
    .limit(limit)
    .select('i.id', 'i.merchant_id')) as Array<{ id: string; merchant_id: string }>;
}
