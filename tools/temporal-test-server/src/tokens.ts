/**
 * Task tokens are opaque to workers; ours are small JSON documents so that a token names exactly
 * one task attempt and a stale or forged token is detected (NOT_FOUND / INVALID_ARGUMENT).
 */
import { invalidArgument } from './errors';

export type TaskToken =
  | { t: 'w'; r: string; s: number; a: number } // workflow task: run, scheduled event id, attempt
  | { t: 'a'; r: string; s: number; a: number } // activity task: run, scheduled event id, attempt
  | { t: 'q'; q: string }; // legacy query task

export function encodeToken(t: TaskToken): Uint8Array {
  return Buffer.from(JSON.stringify(t));
}

export function decodeToken(bytes: Uint8Array | null | undefined): TaskToken {
  if (!bytes || bytes.length === 0) throw invalidArgument('Task token not set on request');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
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
