/**
 * Configuration from the environment, validated once at start-up.
 *
 * Every variable has one line in the schema below and one row in docs/production.md "Configuration".
 * Outside production, missing secrets are generated once and kept under `.data/secrets.json`
 * (with a warning) so that `npm start` works on a fresh machine and keeps working across restarts;
 * in production they are required.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { z } from 'zod';
import { DEV_WEBHOOK_SECRET_KEYS, parseSecretKeys } from './lib/secret-box';

const intFrom = (def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      if (!/^-?\d+$/.test(v.trim())) {
        ctx.addIssue({ code: 'custom', message: `must be an integer between ${min} and ${max}` });
        return z.NEVER;
      }
      const n = Number(v);
      if (n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be an integer between ${min} and ${max}` });
        return z.NEVER;
      }
      return n;
    });

const boolFrom = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? def : v === 'true' || v === '1'));

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const urlString = (protocols: string[]) =>
  optionalString.refine(
    (v) => {
      if (v === undefined) return true;
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  );

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).optional().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  PORT: intFrom(3000, 0, 65535),
  HOST: optionalString.transform((v) => v ?? '0.0.0.0'),
  /** Unset → embedded PostgreSQL under DATA_DIR. */
  DATABASE_URL: urlString(['postgres:', 'postgresql:']),
  /** The owner role's URL for migrations (docs/production.md "Database roles"); unset → DATABASE_URL. */
  DATABASE_MIGRATION_URL: urlString(['postgres:', 'postgresql:']),
  DATABASE_POOL_MAX: intFrom(10, 1, 200),
  /** Unset → `npm start` runs the official Temporal CLI dev server (src/temporal/local-server.ts). */
  TEMPORAL_ADDRESS: optionalString.refine((v) => v === undefined || /^[^\s:]+:\d+$/.test(v), {
    message: 'must be host:port',
  }),
  TEMPORAL_NAMESPACE: optionalString.transform((v) => v ?? 'default'),
  /**
   * TLS to TEMPORAL_ADDRESS (docs/production.md "Connecting to a secured Temporal cluster or
   * Temporal Cloud"). Unset: on when any TEMPORAL_TLS_* path, the server name or the API key is set.
   */
  TEMPORAL_TLS: z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v === 'true' || v === '1')),
  /** PEM CA that signed the server's certificate (unset: the system's trusted CAs). */
  TEMPORAL_TLS_CA_PATH: optionalString,
  /** PEM client certificate and key for mTLS (both or neither). */
  TEMPORAL_TLS_CERT_PATH: optionalString,
  TEMPORAL_TLS_KEY_PATH: optionalString,
  /** Name checked against the server's certificate and sent as SNI (unset: the host of TEMPORAL_ADDRESS). */
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  /** Temporal Cloud API key, sent as `Authorization: Bearer <key>` on every call. */
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TASK_QUEUE: optionalString.transform((v) => v ?? 'pixflow'),
  /**
   * The official Temporal Web UI beside `npm start`'s dev server (TEMPORAL_ADDRESS unset;
   * docs/operations.md "Watching workflows"); `off` = `--headless`.
   */
  TEMPORAL_UI: z.enum(['on', 'off']).optional().default('on'),
  /** Ports of `npm start`'s dev server (gRPC) and its UI; 0 = a free port at each start. */
  TEMPORAL_LOCAL_PORT: intFrom(0, 0, 65535),
  TEMPORAL_UI_PORT: intFrom(0, 0, 65535),
  /** `off` disables the charge workflow reconciler (to show that workflows survive restarts on their own). */
  RECONCILER: z.enum(['on', 'off']).optional().default('on'),
  /** Tag workflows with the MerchantId/EntityId search attributes (the cluster must have them registered). */
  TEMPORAL_SEARCH_ATTRIBUTES: boolFrom(true),
  /** Workflow runs the worker keeps in memory between tasks (docs/performance.md "Where a charge's time goes"): bounds its RSS. */
  TEMPORAL_MAX_CACHED_WORKFLOWS: intFrom(200, 2, 100000),
  /**
   * The API's charge workflow calls go through a Temporal client on a thread of its own
   * (docs/performance.md "Where a charge's time goes"). Off by default: that thread's isolate, with its own copy of the
   * Temporal client, protobuf definitions and gRPC, cost about 50 MB resident for about 0.3 ms of
   * main-thread CPU per charge (docs/performance.md "Memory").
   */
  TEMPORAL_CLIENT_THREAD: boolFrom(false),
  /**
   * The API's Temporal client talks through the SDK's Rust core (the worker's kind of connection)
   * instead of grpc-js: its HTTP/2 runs on the core's own threads, off the event loop that serves
   * requests (docs/performance.md "Where a charge's time goes", Native client). `false`: grpc-js, as before.
   */
  TEMPORAL_CLIENT_NATIVE: boolFrom(true),
  /**
   * Worker threads that render the charges' QR images (0: on the API's main thread). 0 by default:
   * one thread's isolate costs more resident memory (about 10 MB) than its 0.3 ms of main-thread CPU
   * per charge is worth on a small machine (docs/performance.md "Memory").
   */
  QR_THREADS: intFrom(1, 0, 16),
  /** Unset → the acquirer simulator, in-process on a local port. */
  ACQUIRER_URL: urlString(['http:', 'https:']),
  ACQUIRER_CLIENT_ID: optionalString,
  ACQUIRER_CLIENT_SECRET: optionalString,
  ACQUIRER_TIMEOUT_MS: intFrom(5000, 100, 120000),
  ACQUIRER_CALLBACK_SECRET: optionalString,
  /**
   * mTLS to an https ACQUIRER_URL (docs/production.md "Acquirer mTLS"): the CA of the acquirer's
   * server certificate (unset: the system's trusted CAs), and our client certificate and key (both or neither).
   */
  ACQUIRER_TLS_CA_PATH: optionalString,
  ACQUIRER_TLS_CERT_PATH: optionalString,
  ACQUIRER_TLS_KEY_PATH: optionalString,
  /** Base URL at which the acquirer reaches our callback endpoints (default: http://127.0.0.1:PORT). */
  PUBLIC_BASE_URL: urlString(['http:', 'https:']),
  JWT_SECRET: optionalString,
  JWT_TTL: intFrom(3600, 60, 30 * 24 * 3600),
  API_KEY_PEPPER: optionalString,
  ADMIN_EMAIL: optionalString,
  ADMIN_PASSWORD: optionalString,
  RATE_LIMIT_RPS: intFrom(100, 1, 1_000_000),
  RATE_LIMIT_BURST: intFrom(200, 1, 1_000_000),
  /** Every request, per client address, before anything else (docs/api.md "Rate limits"). */
  RATE_LIMIT_ADDRESS_RPS: intFrom(1000, 1, 1_000_000),
  RATE_LIMIT_ADDRESS_BURST: intFrom(2000, 1, 1_000_000),
  /** Failed authentications (bad API key or JWT) per address per window before the address gets 429. */
  AUTH_FAILURES_PER_ADDRESS: intFrom(20, 1, 1_000_000),
  AUTH_FAILURE_WINDOW_SECONDS: intFrom(60, 1, 86400),
  /** Login attempts that fail, per account and per address, within LOGIN_WINDOW_SECONDS. */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: intFrom(10, 1, 1_000_000),
  LOGIN_MAX_FAILURES_PER_ADDRESS: intFrom(50, 1, 1_000_000),
  LOGIN_WINDOW_SECONDS: intFrom(900, 1, 86400),
  /** Password hashes computed at once by one process, and logins allowed to wait for one. */
  PASSWORD_HASH_CONCURRENCY: intFrom(2, 1, 64),
  PASSWORD_HASH_QUEUE: intFrom(32, 0, 10000),
  /** Take the client address from X-Forwarded-For (the entry the nearest proxy added). */
  TRUST_PROXY: boolFrom(false),
  BODY_LIMIT_BYTES: intFrom(1024 * 1024, 1024, 64 * 1024 * 1024),
  MAX_API_KEYS_PER_MERCHANT: intFrom(50, 1, 10000),
  MAX_WEBHOOKS_PER_MERCHANT: intFrom(20, 1, 10000),
  DEFAULT_FEE_BPS: intFrom(99, 0, 10000),
  DEFAULT_FEE_FIXED: intFrom(0, 0, 1_000_000_00),
  DEFAULT_SETTLEMENT_DELAY_SECONDS: intFrom(86400, 0, 365 * 86400),
  CHARGE_LIST_CACHE_MS: intFrom(3000, 0, 600000),
  /**
   * How long an idempotency key replays (docs/api.md "Idempotency"): older keys are purged by the
   * API's periodic job, after which the same key makes a new charge, refund, withdrawal or adjustment.
   */
  IDEMPOTENCY_KEY_TTL_SECONDS: intFrom(86400, 60, 365 * 86400),
  WEBHOOK_TIMEOUT_MS: intFrom(5000, 100, 60000),
  WEBHOOK_RETRY_DELAYS_SECONDS: optionalString
    .transform((v) => v ?? '60,600')
    .refine((v) => /^\d+(,\d+)*$/.test(v), { message: 'must be comma-separated seconds, e.g. 60,600' })
    .transform((v) => v.split(',').map(Number)),
  WEBHOOK_SEND_SECRET_HEADER: boolFrom(false),
  /**
   * Keys that encrypt webhook secrets at rest, `<id>:<base64 32 bytes>,…`, the first encrypts
   * (docs/operations.md "Webhook secret encryption"); unset outside production: the embedded dev ring.
   */
  WEBHOOK_SECRET_KEYS: optionalString,
  /** How long a rotated-out webhook secret still signs deliveries (docs/api.md "Rotating the secret"). */
  WEBHOOK_SECRET_OVERLAP_SECONDS: intFrom(86400, 0, 30 * 86400),
  /** https-only, public-address-only webhook URLs; NODE_ENV=production turns it on whatever it says. */
  WEBHOOK_REQUIRE_PUBLIC_HTTPS: boolFrom(false),
  SIMULATOR_TRANSFER_DELAY_MS: intFrom(2000, 0, 3600000),
  SIMULATOR_AUTO_COMPLETE: boolFrom(true),
  SIMULATOR_KEY_ACTIVATION_DELAY_MS: intFrom(1000, 0, 3600000),
  DATA_DIR: optionalString.transform((v) => path.resolve(v ?? '.data')),
  /** Level of the Temporal SDK's own logs; WARN hides its start-up chatter (docs/operations.md "Metrics and logs"). */
  TEMPORAL_LOG_LEVEL: optionalString
    .transform((v) => (v ?? 'WARN').toUpperCase())
    .pipe(z.enum(['ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'])),
  /** host:port where the Temporal worker's Prometheus exporter listens; unset: off. */
  TEMPORAL_METRICS_ADDRESS: optionalString.refine((v) => v === undefined || /^[^\s:]*:\d+$/.test(v), {
    message: 'must be host:port, e.g. 0.0.0.0:9464',
  }),
  /** `npm run worker` alone: port of its GET /metrics listener; 0: none (the API serves /metrics on PORT). */
  METRICS_PORT: intFrom(0, 0, 65535),
  /** When set, GET /metrics wants `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: optionalString,
  /**
   * OpenTelemetry tracing (docs/operations.md "Tracing"): `otlp` exports spans over OTLP/HTTP,
   * `off` registers nothing. Unset: `otlp` when OTEL_EXPORTER_OTLP_ENDPOINT is set, else `off`.
   */
  TRACING: z.enum(['off', 'otlp', '']).optional(),
  /** Base URL of the OTLP/HTTP collector; spans go to `<url>/v1/traces` (unset with TRACING=otlp: http://localhost:4318). */
  OTEL_EXPORTER_OTLP_ENDPOINT: urlString(['http:', 'https:']),
  /** The `service.name` of every span. */
  OTEL_SERVICE_NAME: optionalString.transform((v) => v ?? 'pixflow'),
  /** ACQUIRER_URL is pixflow's acquirer simulator (`npm run simulator`): the sandbox, said explicitly. */
  ACQUIRER_SANDBOX: boolFrom(false),
  /** `npm run simulator`: where it listens. */
  /** The embedded acquirer simulator runs on a worker thread (docs/performance.md "Where a charge's time goes"); false: on the main thread. */
  SIMULATOR_THREAD: boolFrom(true),
  SIMULATOR_PORT: intFrom(8090, 0, 65535),
  SIMULATOR_HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  /** `npm run simulator` over HTTPS with this PEM certificate and key (both or neither). */
  SIMULATOR_TLS_CERT_PATH: optionalString,
  SIMULATOR_TLS_KEY_PATH: optionalString,
  /** With HTTPS: require a client certificate issued by this PEM CA (the acquirer's mTLS). */
  SIMULATOR_TLS_CLIENT_CA_PATH: optionalString,
});

export type Env = z.infer<typeof envSchema>;

export interface Config extends Omit<Env, 'JWT_SECRET' | 'API_KEY_PEPPER' | 'ACQUIRER_CALLBACK_SECRET' | 'TRACING'> {
  /** Resolved: never unset. */
  TRACING: 'off' | 'otlp';
  JWT_SECRET: string;
  API_KEY_PEPPER: string;
  ACQUIRER_CALLBACK_SECRET: string;
  isProduction: boolean;
  /** Names of secrets that were generated because they were not set (for the start-up warning). */
  generatedSecrets: string[];
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const SECRET_NAMES = ['JWT_SECRET', 'API_KEY_PEPPER', 'ACQUIRER_CALLBACK_SECRET'] as const;
/** docker-compose's sandbox defaults start with this, so they can never guard real money. */
export const SANDBOX_SECRET_PREFIX = 'sandbox-only-';
type SecretName = (typeof SECRET_NAMES)[number];

/** Reads (or creates) the generated development secrets file. */
function loadGeneratedSecrets(dataDir: string, missing: SecretName[]): Record<SecretName, string> {
  const file = path.join(dataDir, 'secrets.json');
  let stored: Partial<Record<SecretName, string>>;
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Record<SecretName, string>>;
  } catch {
    stored = {};
  }
  let changed = false;
  for (const name of missing) {
    if (!stored[name]) {
      stored[name] = crypto.randomBytes(32).toString('base64url');
      changed = true;
    }
  }
  if (changed) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return stored as Record<SecretName, string>;
}

/** The settings the HTTP app (src/http/app.ts) and the account services read. */
export type AppConfig = Pick<
  Config,
  | 'JWT_SECRET'
  | 'JWT_TTL'
  | 'API_KEY_PEPPER'
  | 'RATE_LIMIT_RPS'
  | 'RATE_LIMIT_BURST'
  | 'RATE_LIMIT_ADDRESS_RPS'
  | 'RATE_LIMIT_ADDRESS_BURST'
  | 'AUTH_FAILURES_PER_ADDRESS'
  | 'AUTH_FAILURE_WINDOW_SECONDS'
  | 'LOGIN_MAX_FAILURES_PER_ACCOUNT'
  | 'LOGIN_MAX_FAILURES_PER_ADDRESS'
  | 'LOGIN_WINDOW_SECONDS'
  | 'PASSWORD_HASH_CONCURRENCY'
  | 'PASSWORD_HASH_QUEUE'
  | 'TRUST_PROXY'
  | 'BODY_LIMIT_BYTES'
  | 'MAX_API_KEYS_PER_MERCHANT'
  | 'DEFAULT_FEE_BPS'
  | 'DEFAULT_FEE_FIXED'
  | 'DEFAULT_SETTLEMENT_DELAY_SECONDS'
> &
  /** Absent in test configurations: read as development (the dashboard's cookie is Secure in production). */
  Partial<Pick<Config, 'NODE_ENV'>>;

/** TLS settings: pairs complete, files readable, and each only where it can apply. */
function tlsProblems(e: Env): string[] {
  const problems: string[] = [];
  const pair = (cert: keyof Env, key: keyof Env): void => {
    if ((e[cert] === undefined) !== (e[key] === undefined)) problems.push(`${cert} and ${key}: set both or neither`);
  };
  const readable = (name: keyof Env): void => {
    const file = e[name];
    if (typeof file !== 'string') return;
    try {
      fs.accessSync(file, fs.constants.R_OK);
    } catch {
      problems.push(`${name}: cannot read ${file}`);
    }
  };
  const temporalTls = [
    'TEMPORAL_TLS_CA_PATH',
    'TEMPORAL_TLS_CERT_PATH',
    'TEMPORAL_TLS_KEY_PATH',
    'TEMPORAL_TLS_SERVER_NAME',
  ] as const;
  pair('TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH');
  pair('ACQUIRER_TLS_CERT_PATH', 'ACQUIRER_TLS_KEY_PATH');
  pair('SIMULATOR_TLS_CERT_PATH', 'SIMULATOR_TLS_KEY_PATH');
  for (const n of [
    'TEMPORAL_TLS_CA_PATH',
    'TEMPORAL_TLS_CERT_PATH',
    'TEMPORAL_TLS_KEY_PATH',
    'ACQUIRER_TLS_CA_PATH',
    'ACQUIRER_TLS_CERT_PATH',
    'ACQUIRER_TLS_KEY_PATH',
    'SIMULATOR_TLS_CERT_PATH',
    'SIMULATOR_TLS_KEY_PATH',
    'SIMULATOR_TLS_CLIENT_CA_PATH',
  ] as const)
    readable(n);
  // The local server `npm start` runs is cleartext and keyless: these settings are for a remote one.
  if (!e.TEMPORAL_ADDRESS) {
    for (const n of [...temporalTls, 'TEMPORAL_API_KEY', 'TEMPORAL_TLS'] as const) {
      if (e[n] !== undefined) problems.push(`${n}: needs TEMPORAL_ADDRESS (the local Temporal server has no TLS)`);
    }
  } else if (e.TEMPORAL_TLS === false) {
    for (const n of temporalTls) {
      if (e[n] !== undefined) problems.push(`${n}: TEMPORAL_TLS=false turns TLS off`);
    }
  }
  const acquirerTls = ['ACQUIRER_TLS_CA_PATH', 'ACQUIRER_TLS_CERT_PATH'] as const;
  if (acquirerTls.some((n) => e[n] !== undefined) && !e.ACQUIRER_URL?.startsWith('https:')) {
    problems.push('ACQUIRER_TLS_*: needs an https ACQUIRER_URL');
  }
  if (e.SIMULATOR_TLS_CLIENT_CA_PATH !== undefined && e.SIMULATOR_TLS_CERT_PATH === undefined) {
    problems.push('SIMULATOR_TLS_CLIENT_CA_PATH: needs SIMULATOR_TLS_CERT_PATH and SIMULATOR_TLS_KEY_PATH');
  }
  return problems;
}

function parseSecretKeysProblem(text: string): string | null {
  try {
    parseSecretKeys(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Settings that may come from a file instead (`<NAME>_FILE`, e.g. a compose or Kubernetes secret
 * mounted under /run/secrets), so that credentials need not sit in the environment.
 */
const FILE_SETTINGS = [
  ...SECRET_NAMES,
  'ADMIN_EMAIL',
  'ADMIN_PASSWORD',
  'METRICS_TOKEN',
  'ACQUIRER_CLIENT_SECRET',
  'DATABASE_URL',
  'DATABASE_MIGRATION_URL',
  'WEBHOOK_SECRET_KEYS',
] as const;

function readFileSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  const problems: string[] = [];
  for (const name of FILE_SETTINGS) {
    const file = env[`${name}_FILE`]?.trim();
    if (!file) continue;
    if (env[name]?.trim()) {
      problems.push(`${name} and ${name}_FILE: set one or the other`);
      continue;
    }
    try {
      out[name] = fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out;
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const env = readFileSettings(rawEnv);
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const isProduction = e.NODE_ENV === 'production';
  const missing = SECRET_NAMES.filter((n) => !e[n]);
  const problems = [...(isProduction ? productionProblems(e, missing) : []), ...settingProblems(e)];
  if (problems.length > 0) throw new ConfigError(problems);

  const generated = missing.length > 0 ? loadGeneratedSecrets(e.DATA_DIR, missing) : undefined;
  const secret = (n: SecretName): string => e[n] ?? (generated as Record<SecretName, string>)[n];
  return {
    ...e,
    TRACING: e.TRACING === undefined || e.TRACING === '' ? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp' : 'off') : e.TRACING,
    JWT_SECRET: secret('JWT_SECRET'),
    API_KEY_PEPPER: secret('API_KEY_PEPPER'),
    ACQUIRER_CALLBACK_SECRET: secret('ACQUIRER_CALLBACK_SECRET'),
    isProduction,
    generatedSecrets: [...missing],
  };
}

/** What production refuses: secrets left to be generated, embedded defaults, missing services. */
function productionProblems(e: Env, missing: readonly SecretName[]): string[] {
  const problems: string[] = [];
  for (const n of missing) problems.push(`${n}: required when NODE_ENV=production`);
  if (!e.DATABASE_URL) problems.push('DATABASE_URL: required when NODE_ENV=production');
  if (!e.TEMPORAL_ADDRESS) problems.push('TEMPORAL_ADDRESS: required when NODE_ENV=production');
  if (!e.ACQUIRER_URL) problems.push('ACQUIRER_URL: required when NODE_ENV=production');
  // Counts and workflow names are not for the public: production serves /metrics only with a token.
  if (!e.METRICS_TOKEN) problems.push('METRICS_TOKEN: required when NODE_ENV=production (GET /metrics wants it)');
  if (e.JWT_SECRET && e.JWT_SECRET.length < 32) problems.push('JWT_SECRET: must be at least 32 characters');
  if (!e.WEBHOOK_SECRET_KEYS) problems.push('WEBHOOK_SECRET_KEYS: required when NODE_ENV=production');
  else if (parseSecretKeysProblem(e.WEBHOOK_SECRET_KEYS) === null) {
    const dev = parseSecretKeys(DEV_WEBHOOK_SECRET_KEYS)[0]?.key;
    if (parseSecretKeys(e.WEBHOOK_SECRET_KEYS).some((k) => dev !== undefined && k.key.equals(dev))) {
      problems.push('WEBHOOK_SECRET_KEYS: the embedded development key cannot be used in production');
    }
  }
  return [...problems, ...acquirerProductionProblems(e)];
}

/**
 * A real acquirer needs its credentials; the simulator is allowed only when chosen explicitly,
 * and the sandbox's published default secrets only with it.
 */
function acquirerProductionProblems(e: Env): string[] {
  const problems: string[] = [];
  if (e.ACQUIRER_SANDBOX && (e.ACQUIRER_CLIENT_ID || e.ACQUIRER_CLIENT_SECRET)) {
    problems.push(
      'ACQUIRER_SANDBOX: true means ACQUIRER_URL is the simulator; set ACQUIRER_SANDBOX=false for a real acquirer',
    );
  }
  if (e.ACQUIRER_SANDBOX) return problems;
  for (const n of ['ACQUIRER_CLIENT_ID', 'ACQUIRER_CLIENT_SECRET'] as const) {
    if (!e[n]) problems.push(`${n}: required when NODE_ENV=production (or ACQUIRER_SANDBOX=true for the simulator)`);
  }
  for (const n of SECRET_NAMES) {
    if (e[n]?.startsWith(SANDBOX_SECRET_PREFIX))
      problems.push(`${n}: the sandbox default cannot be used with a real acquirer; set a secret of your own`);
  }
  if (e.WEBHOOK_SECRET_KEYS && /(^|,)\s*sandbox-only/.test(e.WEBHOOK_SECRET_KEYS))
    problems.push(
      'WEBHOOK_SECRET_KEYS: the sandbox default cannot be used with a real acquirer; set a key of your own',
    );
  return problems;
}

/** Settings that are wrong in any environment. */
function settingProblems(e: Env): string[] {
  const problems: string[] = [];
  if (e.WEBHOOK_SECRET_KEYS) {
    const problem = parseSecretKeysProblem(e.WEBHOOK_SECRET_KEYS);
    if (problem) problems.push(`WEBHOOK_SECRET_KEYS: ${problem}`);
  }
  problems.push(...tlsProblems(e));
  if ((e.ADMIN_EMAIL === undefined) !== (e.ADMIN_PASSWORD === undefined)) {
    problems.push('ADMIN_EMAIL and ADMIN_PASSWORD: set both or neither');
  }
  if (e.ADMIN_PASSWORD !== undefined && e.ADMIN_PASSWORD.length < 8) {
    problems.push('ADMIN_PASSWORD: must be at least 8 characters');
  }
  return problems;
}
