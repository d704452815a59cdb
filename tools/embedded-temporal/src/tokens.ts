/**
 * Task tokens are opaque to workers; ours name exactly one task attempt so that a stale or forged
 * token is detected (NOT_FOUND / INVALID_ARGUMENT). Binary, as cheap to make and read as the
 * RPC that carries them: `w`/`a` + scheduled event id (u32) + attempt (u32) + run id, or
 * `q` + query id. Tokens of the older JSON form (`{"t":...}`, e.g. held by a worker across an
 * upgrade and restart of a durable server) are still read.
 */
import { invalidArgument } from './errors';

export type TaskToken =
  | { t: 'w'; r: string; s: number; a: number } // workflow task: run, scheduled event id, attempt
  | { t: 'a'; r: string; s: number; a: number } // activity task: run, scheduled event id, attempt
  | { t: 'q'; q: string }; // legacy query task

const W = 0x77; // 'w'
const A = 0x61; // 'a'
const Q = 0x71; // 'q'
const JSON_START = 0x7b; // '{'

export function encodeToken(t: TaskToken): Uint8Array {
  if (t.t === 'q') {
    const out = Buffer.allocUnsafe(1 + Buffer.byteLength(t.q));
    out[0] = Q;
    out.write(t.q, 1, 'utf8');
    return out;
  }
  const out = Buffer.allocUnsafe(9 + Buffer.byteLength(t.r));
  out[0] = t.t === 'w' ? W : A;
  out.writeUInt32BE(t.s, 1);
  out.writeUInt32BE(t.a, 5);
  out.write(t.r, 9, 'utf8');
  return out;
}

export function decodeToken(bytes: Uint8Array | null | undefined): TaskToken {
  if (!bytes || bytes.length === 0) throw invalidArgument('Task token not set on request');
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kind = b[0];
  if ((kind === W || kind === A) && b.length > 9) {
    return { t: kind === W ? 'w' : 'a', s: b.readUInt32BE(1), a: b.readUInt32BE(5), r: b.toString('utf8', 9) };
  }
  if (kind === Q && b.length > 1) return { t: 'q', q: b.toString('utf8', 1) };
  if (kind === JSON_START) return decodeJsonToken(b);
  throw invalidArgument('Malformed task token');
}

function decodeJsonToken(b: Buffer): TaskToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(b.toString('utf8'));
  } catch {
    throw invalidArgument('Malformed task token');
  }
  if (typeof parsed === 'object' && parsed !== null && 't' in parsed) {
    const p = parsed as Record<string, unknown>;
    if ((p.t === 'w' || p.t === 'a') && typeof p.r === 'string' && typeof p.s === 'number' && typeof p.a === 'number') {
      return { t: p.t, r: p.r, s: p.s, a: p.a };
    }
    if (p.t === 'q' && typeof p.q === 'string') return { t: 'q', q: p.q };
  }
  throw invalidArgument('Malformed task token');
}
