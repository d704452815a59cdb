/**
 * int8 (bigint) columns hold money in cents and counts. node-pg returns them as strings by default
 * to be safe beyond 2^53; our amounts stay far below that (R$ 90 trillion), so we read them as
 * numbers and keep the arithmetic in integers. Set once per process, before the first query.
 */
import pg from 'pg';

const INT8_OID = 20;
let installed = false;

export function installPgTypeParsers(): void {
  if (installed) return;
  pg.types.setTypeParser(INT8_OID, (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error(`int8 value out of safe range: ${value}`);
    return n;
  });
  installed = true;
}
