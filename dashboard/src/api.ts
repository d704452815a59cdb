/**
 * The pages' only way to the API: openapi-fetch over the types generated from /openapi.json
 * (examples/typed-client/api.d.ts), so a page and the API cannot drift. Calls go to
 * /dashboard/api/v1/… with the session cookie (sent by the browser, unreadable here) and the
 * session's CSRF token on every state-changing call (docs/dashboard.md "How the session is kept safe").
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../examples/typed-client/api';

export type ApiError = components['schemas']['Error'];

let csrfToken = '';
let onExpired: () => void = () => undefined;

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when an answer says the session is gone (401): the app returns to sign-in. */
export function whenSessionExpires(handler: () => void): void {
  onExpired = handler;
}

const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onExpired();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: `${location.origin}/dashboard/api`, credentials: 'same-origin' });
api.use(session);

/** The message of an error answer (the API's own words), or a generic one when the body is not ours. */
export function messageOf(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string')
    return error.message;
  return String(error);
}

/** A failed call: the API's message, and the field it concerns when it names one. */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

function failure(error: unknown, fallback: string): ApiFailure {
  const param =
    error && typeof error === 'object' && 'param' in error && typeof error.param === 'string' ? error.param : undefined;
  return new ApiFailure(error === undefined ? fallback : messageOf(error), param);
}

/** An API call's data, or a thrown ApiFailure carrying the API's message. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined) throw failure(error, response.statusText);
  return data;
}

export interface SessionInfo {
  csrfToken: string;
  sandbox: boolean;
}

async function sessionCall(method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<SessionInfo> {
  const res = await fetch('/dashboard/session', {
    method,
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', ...(method === 'DELETE' ? { 'x-csrf-token': csrfToken } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return { csrfToken: '', sandbox: false };
  const json: unknown = await res.json();
  if (!res.ok) throw failure(json, res.statusText);
  const info = json as SessionInfo;
  setCsrfToken(info.csrfToken);
  return info;
}

export const signIn = (email: string, password: string) => sessionCall('POST', { email, password });
export const currentSession = () => sessionCall('GET');
export const signOut = () => sessionCall('DELETE');

/** A multipart POST (defenses with files), which openapi-fetch's JSON bodies do not cover. */
export async function postForm(path: string, form: FormData): Promise<unknown> {
  const res = await fetch(`/dashboard/api${path}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'x-csrf-token': csrfToken },
    body: form,
  });
  if (res.status === 401) onExpired();
  const json: unknown = await res.json();
  if (!res.ok) throw failure(json, res.statusText);
  return json;
}

/** An idempotency key per submitted form (crypto.randomUUID needs a secure context; this does not). */
export function idempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}
