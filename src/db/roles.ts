/**
 * The two database roles (docs/production.md "Database roles"): `pixflow_owner` owns the schema
 * and runs the migrations; `pixflow_app`, the service's, owns nothing, is neither superuser nor
 * CREATEROLE, and gets its privileges from the migrations (migrations/20261201170000_least_privilege).
 * The embedded PostgreSQL and the test suite provision them here, as the cluster's superuser;
 * docker-compose does the same in tools/compose/init-roles.sh.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const OWNER_ROLE = 'pixflow_owner';
export const APP_ROLE = 'pixflow_app';

export interface RolePasswords {
  superuser: string;
  owner: string;
  app: string;
}

const KEYS: Record<keyof RolePasswords, string> = {
  superuser: 'POSTGRES_SUPERUSER_PASSWORD',
  owner: 'DATABASE_OWNER_PASSWORD',
  app: 'DATABASE_APP_PASSWORD',
};

/**
 * The embedded cluster's passwords, generated once into `file` (DATA_DIR/secrets.json, mode 0600,
 * shared with the generated development secrets of src/config.ts: other keys are kept).
 */
export function embeddedPasswords(file: string): RolePasswords {
  let stored: Record<string, unknown>;
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    stored = {};
  }
  let changed = false;
  const out = {} as RolePasswords;
  for (const [name, key] of Object.entries(KEYS) as Array<[keyof RolePasswords, string]>) {
    const value = stored[key];
    if (typeof value === 'string' && value.length > 0) out[name] = value;
    else {
      out[name] = crypto.randomBytes(24).toString('base64url');
      stored[key] = out[name];
      changed = true;
    }
  }
  if (changed) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  fs.chmodSync(file, 0o600);
  return out;
}

const literal = (client: pg.Client, value: string): string => client.escapeLiteral(value);

/** Creates (or re-keys) a login role with only the attributes it is meant to have. */
async function ensureLoginRole(client: pg.Client, role: string, password: string): Promise<void> {
  const exists = await client.query('select 1 from pg_roles where rolname = $1', [role]);
  const verb = exists.rowCount === 0 ? 'create' : 'alter';
  await client.query(
    `${verb} role ${role} login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${literal(client, password)}`,
  );
}

/**
 * As the cluster's superuser, in `database`'s cluster: both roles, the database owned by the owner
 * role (objects a superuser made in it before, e.g. an embedded cluster of an earlier version, are
 * handed over), and no TEMP or CREATE on it for PUBLIC.
 */
export async function provisionRoles(
  superuser: pg.Client,
  database: string,
  passwords: Pick<RolePasswords, 'owner' | 'app'>,
): Promise<void> {
  await ensureLoginRole(superuser, OWNER_ROLE, passwords.owner);
  await ensureLoginRole(superuser, APP_ROLE, passwords.app);
  const db = await superuser.query<{ owner: string }>(
    'select pg_get_userbyid(datdba) as owner from pg_database where datname = $1',
    [database],
  );
  const ident = superuser.escapeIdentifier(database);
  if (db.rowCount === 0) await superuser.query(`create database ${ident} owner ${OWNER_ROLE}`);
  else if (db.rows[0]?.owner !== OWNER_ROLE) await superuser.query(`alter database ${ident} owner to ${OWNER_ROLE}`);
  await superuser.query(`revoke temporary, create on database ${ident} from public`);
  await superuser.query(`grant connect on database ${ident} to ${APP_ROLE}`);
}

/**
 * Hands the public schema's tables, sequences, views and functions made by another role (an
 * embedded cluster migrated as `postgres` before the roles existed) to the owner role. Runs
 * connected to the database itself.
 */
export async function adoptObjects(superuserInDatabase: pg.Client): Promise<void> {
  await superuserInDatabase.query(`do $$
    declare r record;
    begin
      for r in select c.oid::regclass as name from pg_class c
                 where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm')
                   and pg_get_userbyid(c.relowner) <> '${OWNER_ROLE}' loop
        execute format('alter table %s owner to ${OWNER_ROLE}', r.name);
      end loop;
      for r in select c.oid::regclass as name from pg_class c
                 where c.relnamespace = 'public'::regnamespace and c.relkind = 'S'
                   and pg_get_userbyid(c.relowner) <> '${OWNER_ROLE}'
                   and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype in ('a', 'i')) loop
        execute format('alter sequence %s owner to ${OWNER_ROLE}', r.name);
      end loop;
      for r in select p.oid::regprocedure as name from pg_proc p
                 where p.pronamespace = 'public'::regnamespace and pg_get_userbyid(p.proowner) <> '${OWNER_ROLE}' loop
        execute format('alter function %s owner to ${OWNER_ROLE}', r.name);
      end loop;
    end $$`);
}
