/**
 * Public ids: `<prefix>_<26-char ULID>`. ULIDs sort by creation time, so ids double as a stable
 * tie-breaker for "newest first" lists, and the prefix tells an operator what an id names.
 */
import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

export function newId(prefix: string): string {
  return `${prefix}_${nextUlid()}`;
}
