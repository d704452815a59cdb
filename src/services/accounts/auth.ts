/**
 * Login, login tokens and who may still use them (docs/api.md "Authentication", and "Auth hardening").
 *
 * Passwords are argon2id hashes. An unknown e-mail and a wrong password get the same error, and an
 * unknown e-mail is still checked against a dummy hash so the answer takes as long either way.
 *
 * Login is limited before any password work: failed attempts are counted per account (the
 * normalised e-mail, known or not, so the limit says nothing about which accounts exist) and per
 * client address in a shared window; once either allowance is spent, logins are 429 with
 * Retry-After until the window ends, even with the right password. A successful login clears the
 * account's count and gives the address its attempt back. Password verification runs under a small
 * per-process concurrency limit with a bounded queue, so a flood costs bounded CPU.
 *
 * Tokens are HS256 JWTs with `sub` (user id), `merchantId` (null for operators), `role` and `ver`
 * (the user's token version), living JWT_TTL seconds. Each request checks the user and its
 * merchant (one primary-key read, cached per process until a user or merchant changes; the change's
 * notification drops the entry as it commits): a token whose version an operator has bumped is 401,
 * a disabled user or a suspended merchant is 403, from the very next request on.
 */
import type { loginResponse } from '../../contracts/auth';
import { bindContext } from '../../lib/bind-context';
import crypto from 'node:crypto';
import { hash, verify, Algorithm } from '@node-rs/argon2';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Knex } from 'knex';
import type { Config } from '../../config';
import { BoundedConcurrency, QueueFullError } from '../../lib/bounded-concurrency';
import { AppError, forbidden, unauthenticated } from '../../lib/errors';
import { merchantsStore, type UserAccessRow } from '../../stores/merchants';
import { createLimiter, type LimitOutcome } from './rate-limits';
import { LRUCache } from 'lru-cache';
import { cacheInvalidation, type CacheInvalidation } from '../platform/cache-invalidation';
import { USER_ROLES, type Role } from '../../contracts/statuses';

export type { Role };

/** Who is calling: a logged-in user (JWT) or a merchant's API key. */
export type Principal =
  | { kind: 'jwt'; userId: string; merchantId: string | null; role: Role }
  | { kind: 'apiKey'; apiKeyId: string; merchantId: string; role: 'USER' };

const ARGON2_OPTIONS = { algorithm: Algorithm.Argon2id } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    // A malformed stored hash must read as "wrong password", never as a 500.
    return false;
  }
}

// Hashed once, lazily: verifying against it costs what a real verification costs.
let dummyHash: Promise<string> | undefined;
function dummy(): Promise<string> {
  dummyHash ??= hashPassword('pixflow-timing-equaliser');
  return dummyHash;
}

const claimsSchema = z.object({
  sub: z.string().min(1),
  merchantId: z.string().min(1).nullable(),
  role: z.enum(USER_ROLES),
  ver: z.int().min(0),
});

/** A JWT whose signature, expiry and shape are valid; whether its user may still use it is separate. */
export type JwtClaims = z.infer<typeof claimsSchema>;

export type LoginResult = z.infer<typeof loginResponse>;

export const INVALID_LOGIN = 'Invalid e-mail or password';
export const MERCHANT_SUSPENDED = 'This merchant account is suspended; contact support';
export const USER_DISABLED = 'This user is disabled; contact support';

export type AuthConfig = Pick<
  Config,
  | 'JWT_SECRET'
  | 'JWT_TTL'
  | 'LOGIN_MAX_FAILURES_PER_ACCOUNT'
  | 'LOGIN_MAX_FAILURES_PER_ADDRESS'
  | 'LOGIN_WINDOW_SECONDS'
  | 'PASSWORD_HASH_CONCURRENCY'
  | 'PASSWORD_HASH_QUEUE'
>;

export function tooManyRequests(message: string, retryAfterSeconds: number): AppError {
  return new AppError('rate_limited', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}

/** The state that decides whether a user's credentials still work (one primary-key read). */
type AccessRow = UserAccessRow;

/** 403 for a disabled user or a suspended merchant: the credential is right but no longer honoured. */
export function assertAccessAllowed(row: { status?: string | null; merchantStatus?: string | null }): void {
  if (row.status === 'DISABLED') throw forbidden(USER_DISABLED);
  if (row.merchantStatus === 'SUSPENDED') throw forbidden(MERCHANT_SUSPENDED);
}

const accountKey = (email: string): string => crypto.createHash('sha256').update(email).digest('hex').slice(0, 40);

type AuthDeps = { knex: Knex; config: AuthConfig; invalidation?: CacheInvalidation };
/** What every operation reads: the dependencies, the access cache, the login limiters and the hashing queue. */
type AuthCtx = AuthDeps & {
  invalidation: CacheInvalidation;
  access: LRUCache<string, { generation: number; row: AccessRow }>;
  window: number;
  perAccount: ReturnType<typeof createLimiter>;
  perAddress: ReturnType<typeof createLimiter>;
  hashing: BoundedConcurrency;
};

export function createAuthService(deps: AuthDeps) {
  const { knex, config } = deps;
  const window = config.LOGIN_WINDOW_SECONDS;
  const ctx: AuthCtx = {
    ...deps,
    invalidation: deps.invalidation ?? cacheInvalidation(knex),
    access: new LRUCache<string, { generation: number; row: AccessRow }>({ max: 10_000 }),
    window,
    perAccount: createLimiter(knex, {
      name: 'login-account',
      points: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
      windowSeconds: window,
    }),
    perAddress: createLimiter(knex, {
      name: 'login-address',
      points: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
      windowSeconds: window,
    }),
    hashing: new BoundedConcurrency(config.PASSWORD_HASH_CONCURRENCY, config.PASSWORD_HASH_QUEUE),
  };
  return bindContext(ctx, { login, issueToken, decodeToken, resolveToken });
}

async function accessRow(ctx: AuthCtx, userId: string): Promise<AccessRow | undefined> {
  const { invalidation, access, knex } = ctx;
  const generation = invalidation.generation();
  const hit = invalidation.live() ? access.get(userId) : undefined;
  if (hit && hit.generation === generation) return hit.row;
  const row = await merchantsStore(knex).findUserAccess(userId);
  if (row) access.set(userId, { generation, row });
  else access.delete(userId);
  return row;
}

export function issueToken(
  ctx: AuthCtx,
  user: { id: string; merchantId: string | null; role: Role; tokenVersion: number },
): string {
  const { config } = ctx;
  return jwt.sign({ merchantId: user.merchantId, role: user.role, ver: user.tokenVersion }, config.JWT_SECRET, {
    algorithm: 'HS256',
    subject: user.id,
    expiresIn: config.JWT_TTL,
  });
}

/** Signature, expiry and claims only (no database): null when malformed, tampered with or expired. */
export function decodeToken(ctx: AuthCtx, token: string): JwtClaims | null {
  const { config } = ctx;
  let payload: unknown;
  try {
    payload = jwt.verify(token, config.JWT_SECRET, { algorithms: ['HS256'] });
  } catch {
    return null;
  }
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) return null;
  // A USER token must name its merchant; an ADMIN token must not (enforced at issue, rechecked).
  if ((claims.data.role === 'USER') !== (claims.data.merchantId !== null)) return null;
  return claims.data;
}

/**
 * The caller behind decoded claims: null (→ 401) when the user is gone, its token version was
 * bumped or its role or merchant changed; throws 403 when the user is disabled or its merchant
 * suspended.
 */
export async function resolveToken(ctx: AuthCtx, claims: JwtClaims): Promise<Principal | null> {
  const row = await accessRow(ctx, claims.sub);
  if (!row || row.role !== claims.role || row.merchant_id !== claims.merchantId) return null;
  // Disabled or suspended first: such a caller learns why (403) even though disabling also
  // bumped the version; a version that does not match is a revoked token (401).
  assertAccessAllowed({ status: row.status, merchantStatus: row.merchant_status });
  if (row.token_version !== claims.ver) return null;
  return { kind: 'jwt', userId: row.id, merchantId: row.merchant_id, role: row.role };
}

function refusal(account: LimitOutcome, address: LimitOutcome): AppError | undefined {
  if (!account.allowed) {
    return tooManyRequests(
      'Too many failed login attempts for this account; try again later',
      account.retryAfterSeconds,
    );
  }
  if (!address.allowed) {
    return tooManyRequests(
      'Too many failed login attempts from this address; try again later',
      address.retryAfterSeconds,
    );
  }
  return undefined;
}

/** `address` is the client address the per-address limit counts (see docs/api.md "Rate limits"). */
export async function login(ctx: AuthCtx, email: string, password: string, address: string): Promise<LoginResult> {
  const { perAccount, perAddress, knex, hashing } = ctx;
  const normalised = email.trim().toLowerCase();
  const account = accountKey(normalised);
  // Counted before the password is checked, so parallel guesses cannot slip past the limit;
  // given back below when the login succeeds.
  const [accountOutcome, addressOutcome] = await Promise.all([
    perAccount.consume(account),
    perAddress.consume(address),
  ]);
  const refused = refusal(accountOutcome, addressOutcome);
  if (refused) throw refused;

  const user = await merchantsStore(knex).findUserByEmail(normalised);
  let verified: boolean;
  try {
    verified = await hashing.run(async () => verifyPassword(user ? user.passwordHash : await dummy(), password));
  } catch (err) {
    if (!(err instanceof QueueFullError)) throw err;
    // Not an attempt at all: give both counts back.
    await Promise.all([perAccount.reward(account), perAddress.reward(address)]);
    throw tooManyRequests('Too many logins in progress; retry shortly', 1);
  }
  if (!user || !verified) throw unauthenticated(INVALID_LOGIN);

  await Promise.all([perAccount.reset(account), perAddress.reward(address)]);
  let merchantStatus: string | null = null;
  if (user.merchantId) {
    merchantStatus = await merchantsStore(knex).statusOf(user.merchantId);
  }
  assertAccessAllowed({ status: user.status, merchantStatus });
  const role = user.role as Role;
  return {
    token: issueToken(ctx, { id: user.id, merchantId: user.merchantId ?? null, role, tokenVersion: user.tokenVersion }),
    user: { id: user.id, email: user.email, role },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
