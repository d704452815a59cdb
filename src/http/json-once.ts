/**
 * JSON bodies that are served many times as the same object (the charge list's cached pages,
 * docs/performance.md "Where a read's time goes") are serialized once: the string is kept beside the object, so a
 * cache hit costs no `JSON.stringify` of twenty charges. Objects not seen before are serialized as
 * Koa would (`JSON.stringify` without indentation); a fresh object per request gains nothing here,
 * so only bodies that a cache hands out again should go through this.
 */
import type { Context } from 'koa';

const serialized = new WeakMap<object, string>();

/** Sets `ctx.body` to `body` as JSON, reusing the serialization of an object already sent. */
export function sendJsonOnce(ctx: Context, body: object): void {
  let text = serialized.get(body);
  if (text === undefined) {
    text = JSON.stringify(body);
    serialized.set(body, text);
  }
  ctx.type = 'application/json';
  ctx.body = text;
}
