/**
 * Login and login tokens (DECISIONS "Auth").
 *
 * Passwords are argon2id hashes. An unknown e-mail and a wrong password get the same error, and an
 * unknown e-mail is still checked against a dummy hash so the answer takes as long either way.
 * Tokens are HS256 JWTs with `sub` (user id), `merchantId` (null for operators) and `role`, living
 * JWT_TTL seconds. They are stateless on purpose: verification needs no database round trip.
 */
import { hash, verify, Algorithm } from '@node-rs/argon2';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { unauthenticated } from '../lib/errors';
import { User } from '../models/user';

export type Role = 'USER' | 'ADMIN';

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
  role: z.enum(['USER', 'ADMIN']),
});

export interface LoginResult {
  token: string;
  user: { id: string; email: string; role: Role };
}

export const INVALID_LOGIN = 'Invalid e-mail or password';

export type AuthConfig = Pick<Config, 'JWT_SECRET' | 'JWT_TTL'>;

export function createAuthService(deps: { knex: Knex; config: AuthConfig }) {
  const { knex, config } = deps;

  function issueToken(user: { id: string; merchantId: string | null; role: Role }): string {
    return jwt.sign({ merchantId: user.merchantId, role: user.role }, config.JWT_SECRET, {
      algorithm: 'HS256',
      subject: user.id,
      expiresIn: config.JWT_TTL,
    });
  }

  /** The caller behind a JWT, or null when it is malformed, tampered with or expired. */
  function verifyToken(token: string): Principal | null {
    let payload: unknown;
    try {
      payload = jwt.verify(token, config.JWT_SECRET, { algorithms: ['HS256'] });
    } catch {
      return null;
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) return null;
    const { sub, merchantId, role } = claims.data;
    // A USER token must name its merchant; an ADMIN token must not (enforced at issue, rechecked).
    if ((role === 'USER') !== (merchantId !== null)) return null;
    return { kind: 'jwt', userId: sub, merchantId, role };
  }

  async function login(email: string, password: string): Promise<LoginResult> {
    const user = await User.query(knex).findOne({ email: email.trim().toLowerCase() });
    if (!user) {
      await verifyPassword(await dummy(), password);
      throw unauthenticated(INVALID_LOGIN);
    }
    if (!(await verifyPassword(user.passwordHash, password))) throw unauthenticated(INVALID_LOGIN);
    const role = user.role as Role;
    return {
      token: issueToken({ id: user.id, merchantId: user.merchantId ?? null, role }),
      user: { id: user.id, email: user.email, role },
    };
  }

  return { login, issueToken, verifyToken };
}

export type AuthService = ReturnType<typeof createAuthService>;
