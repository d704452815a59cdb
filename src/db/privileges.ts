/**
 * What the service's database role may be in production (docs/production.md "Database roles"):
 * not a superuser, unable to bypass row security or create roles, owning none of the tables.
 * Any of those would let it disable the ledger's triggers or rewrite its rules.
 */
import type { Knex } from 'knex';

/** A one-line refusal to start, printed as it is (src/process/entry-point.ts). */
export class DatabaseRoleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseRoleError';
  }
}

interface RoleFacts {
  role: string;
  superuser: boolean;
  bypassrls: boolean;
  createrole: boolean;
  owned: string | null;
}

/** What the session's role is and (one example of) what it owns in the current schema. */
export async function roleFacts(knex: Knex): Promise<RoleFacts> {
  const result = (await knex.raw(`select current_user as role, r.rolsuper as superuser, r.rolbypassrls as bypassrls,
      r.rolcreaterole as createrole,
      (select c.relname from pg_class c
         where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
           and pg_has_role(current_user, c.relowner, 'USAGE')
         order by c.relname limit 1) as owned
    from pg_roles r where r.rolname = current_user`)) as { rows: RoleFacts[] };
  const facts = result.rows[0];
  if (!facts) throw new DatabaseRoleError('database: cannot read the role of DATABASE_URL');
  return facts;
}

/** Refuses (DatabaseRoleError) a role that could get around the database's own rules. */
export async function assertLeastPrivilege(knex: Knex): Promise<void> {
  const f = await roleFacts(knex);
  const why = f.superuser
    ? 'is a superuser'
    : f.bypassrls
      ? 'can bypass row-level security'
      : f.createrole
        ? 'can create roles'
        : f.owned
          ? `owns table ${f.owned}`
          : null;
  if (why)
    throw new DatabaseRoleError(
      `DATABASE_URL's role ${f.role} ${why}: in production the service runs as a role that owns nothing ` +
        '(pixflow_app) and migrations use DATABASE_MIGRATION_URL (docs/production.md "Database roles")',
    );
}
