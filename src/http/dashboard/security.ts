/**
 * What every dashboard answer carries and how its session cookie is written and read
 * (docs/dashboard.md "How the session is kept safe").
 */
import type { AppContext } from '../types';

export const SESSION_COOKIE = 'pixflow_dashboard';
export const CSRF_HEADER = 'x-csrf-token';
export const COOKIE_PATH = '/dashboard';

/** Scripts, styles and fetches from this origin only; images also as data: URLs (the QR Code). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setDashboardHeaders(ctx: AppContext): void {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

/** The Set-Cookie value of a session (`maxAgeSeconds` 0 clears it). Written by hand: Koa refuses Secure over a plain socket. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    `Path=${COOKIE_PATH}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** The session token the browser sent, if any (a JWT has only URL-safe characters and dots). */
export function sessionTokenOf(ctx: AppContext): string | undefined {
  for (const pair of (ctx.get('cookie') || '').split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(at + 1).trim();
    if (/^[A-Za-z0-9_.-]{1,4096}$/.test(value)) return value;
  }
  return undefined;
}

/**
 * False when the browser says the request comes from another site: an `Origin` that is not ours,
 * or a `Sec-Fetch-Site` other than same-origin. Clients that send neither are judged by the CSRF token.
 */
export function fromOwnOrigin(ctx: AppContext): boolean {
  const origin = ctx.get('origin');
  // Our own origin from the request line and Host (Koa's ctx.origin would echo the Origin header).
  if (origin && origin !== `${ctx.protocol}://${ctx.host}`) return false;
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin') return false;
  return true;
}
