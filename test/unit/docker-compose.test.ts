/**
 * docker-compose.yml, checked without a Docker engine: the services of the production shape,
 * their images, ports, start order and healthchecks, and that the API and worker are wired to the
 * compose PostgreSQL, Temporal and (sandbox profile) acquirer simulator, with an environment the
 * service's own configuration accepts in production.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config';
import { needing, type Artefact } from '../support/external-artefacts';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string | string[];
  entrypoint?: string | string[];
  ports?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
  healthcheck?: { test: string | string[] };
  volumes?: string[];
  secrets?: string[];
}

/**
 * The Compose CLI, if this machine has one: `docker compose` v2 (or a v2 `docker-compose`), else
 * Debian's Compose 1 (`docker-compose` 1.29, what `.ci/run` installs), which checks the same file
 * with one key taken out: `depends_on.<service>.required` (Compose 2.20), which it does not know.
 */
function composeCli(): Artefact & { legacy?: boolean } {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const [bin = '', ...args] = command;
    const v = spawnSync(bin, [...args, 'version', '--short'], { encoding: 'utf8' });
    if (v.status === 0 && /^v?2\./.test(v.stdout.trim())) return { path: command.join(' ') };
  }
  const v1 = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  if (v1.status === 0 && /^1\.(2[89]|[3-9]\d)\./.test(v1.stdout.trim()))
    return { path: 'docker-compose', legacy: true };
  return { reason: 'no Docker Compose CLI (`docker compose`, or `docker-compose` 1.28+) on this machine' };
}

/** What `docker compose` does with `${NAME:-default}` and `${NAME}` when NAME is not set. */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_m, _name: string, def?: string) => def ?? '');
}

function env(service: Service): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
}

describe('docker-compose.yml', () => {
  const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
    volumes?: Record<string, unknown>;
    secrets?: Record<string, { file?: string }>;
  };
  const services = compose.services;
  const svc = (name: string): Service => {
    const s = services[name];
    assert.ok(s, `service ${name} exists`);
    return s;
  };
  const image = (name: string): string => interpolate(svc(name).image ?? '');
  const dependsOn = (name: string, on: string): string | undefined => svc(name).depends_on?.[on]?.condition;
  let secretsDir: string;

  before(() => {
    secretsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-secrets-'));
    fs.writeFileSync(path.join(secretsDir, 'admin_email'), 'ops@pixflow.test');
    fs.writeFileSync(path.join(secretsDir, 'admin_password'), 'compose-test-operator-password');
    fs.writeFileSync(path.join(secretsDir, 'metrics_token'), 'compose-test-metrics-token');
    for (const name of ['db_superuser_password', 'db_owner_password', 'db_app_password'])
      fs.writeFileSync(path.join(secretsDir, name), `compose-test-${name}`);
    fs.writeFileSync(path.join(secretsDir, 'database_url'), 'postgres://pixflow_app:pw@postgres:5432/pixflow');
    fs.writeFileSync(
      path.join(secretsDir, 'database_migration_url'),
      'postgres://pixflow_owner:pw@postgres:5432/pixflow',
    );
  });

  /** A service's environment with the secrets where compose mounts them: /run/secrets/<name> → the test's files. */
  const appEnv = (app: string): Record<string, string> =>
    Object.fromEntries(
      Object.entries(env(svc(app))).map(([k, v]) => [k, v.replace(/^\/run\/secrets\//, `${secretsDir}/`)]),
    );

  after(() => fs.rmSync(secretsDir, { recursive: true, force: true }));

  it('has the production-shaped services, from the official images or our Dockerfile', () => {
    assert.match(image('postgres'), /^postgres:\d+/);
    assert.match(image('temporal-postgresql'), /^postgres:\d+/);
    assert.match(image('temporal-admin-tools'), /^temporalio\/admin-tools:\d+\.\d+\.\d+$/);
    assert.match(image('temporal'), /^temporalio\/server:\d+\.\d+\.\d+$/);
    assert.match(image('temporal-create-namespace'), /^temporalio\/admin-tools:/);
    assert.match(image('temporal-ui'), /^temporalio\/ui:\d+\.\d+\.\d+$/);
    for (const name of ['migrate', 'api', 'worker', 'acquirer-simulator']) {
      assert.equal(svc(name).build, '.', `${name} is built from the Dockerfile`);
    }
    assert.ok(fs.existsSync(path.join(ROOT, 'Dockerfile')));
  });

  it('runs the compiled entry points with node (no npm, no tsx)', () => {
    const expected: Record<string, string> = {
      migrate: 'migrate',
      api: 'api',
      worker: 'worker',
      'acquirer-simulator': 'simulator',
    };
    for (const [name, cli] of Object.entries(expected)) {
      assert.deepEqual(svc(name).command, ['node', `dist/src/cli/${cli}.js`]);
      assert.ok(fs.existsSync(path.join(ROOT, `src/cli/${cli}.ts`)), `src/cli/${cli}.ts exists`);
    }
    // `docker compose run --rm ops <command>`: the ops CLI, on demand only.
    assert.deepEqual(svc('ops').entrypoint, ['node', 'dist/src/cli/ops.js']);
    assert.deepEqual(svc('ops').profiles, ['ops']);
    assert.match(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), /docker compose run --rm ops /);
  });

  it('creates the first operator and guards /metrics from compose secrets', () => {
    for (const name of ['admin_email', 'admin_password', 'metrics_token']) {
      assert.match(interpolate(compose.secrets?.[name]?.file ?? ''), new RegExp(`^\\./secrets/${name}$`));
      for (const app of ['migrate', 'api', 'worker', 'ops']) {
        assert.ok(svc(app).secrets?.includes(name), `${app} gets the ${name} secret`);
      }
    }
    const api = env(svc('api'));
    assert.equal(api.ADMIN_EMAIL_FILE, '/run/secrets/admin_email');
    assert.equal(api.ADMIN_PASSWORD_FILE, '/run/secrets/admin_password');
    assert.equal(api.METRICS_TOKEN_FILE, '/run/secrets/metrics_token');
    const script = spawnSync('sh', [path.join(ROOT, 'tools/compose/make-secrets.sh'), 'ops@pixflow.test'], {
      env: { PATH: process.env.PATH, PIXFLOW_SECRETS_DIR: path.join(secretsDir, 'made') },
      encoding: 'utf8',
    });
    assert.equal(script.status, 0, script.stderr);
    assert.equal(fs.readFileSync(path.join(secretsDir, 'made/admin_email'), 'utf8'), 'ops@pixflow.test');
    assert.ok(fs.readFileSync(path.join(secretsDir, 'made/admin_password'), 'utf8').length >= 32);
    // The database's roles: the URLs carry the passwords the init script gives the roles.
    const made = (name: string): string => fs.readFileSync(path.join(secretsDir, 'made', name), 'utf8');
    for (const [file, role, password] of [
      ['database_url', 'pixflow_app', 'db_app_password'],
      ['database_migration_url', 'pixflow_owner', 'db_owner_password'],
    ] as const) {
      const url = new URL(made(file));
      assert.deepEqual(
        [url.username, url.password, url.host, url.pathname],
        [role, made(password), 'postgres:5432', '/pixflow'],
      );
      assert.ok(made(password).length >= 32);
    }
    assert.ok(made('db_superuser_password').length >= 32);
  });

  const COMPOSE = composeCli();
  const composeTitle = needing(
    COMPOSE,
    COMPOSE.legacy
      ? 'passes `docker-compose config` (Compose 1, without the depends_on `required` keys it does not know)'
      : 'passes `docker compose config` (no daemon needed)',
  );
  if (!COMPOSE.path) it(composeTitle);
  else
    it(composeTitle, () => {
      const [bin = '', ...args] = (COMPOSE.path ?? '').split(' ');
      let file = path.join(ROOT, 'docker-compose.yml');
      if (COMPOSE.legacy) {
        const text = fs.readFileSync(file, 'utf8');
        const stripped = text.replace(/^\s+required: (true|false)\n/gm, '');
        assert.notEqual(stripped, text, 'the file has the keys Compose 1 is spared');
        file = path.join(secretsDir, 'docker-compose.compose1.yml');
        fs.writeFileSync(file, stripped);
      }
      const r = spawnSync(
        bin,
        [
          ...args,
          '-f',
          file,
          '--project-directory',
          ROOT,
          '--profile',
          'sandbox',
          '--profile',
          'ops',
          '--profile',
          'local-ports',
          'config',
          '--quiet',
        ],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, PIXFLOW_SECRETS_DIR: secretsDir },
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
    });

  const composeTitleDefault = needing(
    COMPOSE,
    `\`${COMPOSE.path ?? 'docker compose'} config\` publishes no Temporal or UI port by default, and only on 127.0.0.1 with local-ports`,
  );
  if (!COMPOSE.path) it(composeTitleDefault);
  else
    it(composeTitleDefault, () => {
      const [bin = '', ...args] = (COMPOSE.path ?? '').split(' ');
      let file = path.join(ROOT, 'docker-compose.yml');
      if (COMPOSE.legacy) {
        file = path.join(secretsDir, 'docker-compose.compose1-ports.yml');
        fs.writeFileSync(
          file,
          fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8').replace(/^\s+required: (true|false)\n/gm, ''),
        );
      }
      type Port = string | { host_ip?: string; published?: string | number; target: number };
      /** Every published port of the resolved file, as [service, host address, host port]. */
      const published = (profiles: string[]): Array<[string, string, string]> => {
        const r = spawnSync(
          bin,
          [...args, '-f', file, '--project-directory', ROOT, ...profiles.flatMap((p) => ['--profile', p]), 'config'],
          {
            cwd: ROOT,
            env: { PATH: process.env.PATH, HOME: process.env.HOME, PIXFLOW_SECRETS_DIR: secretsDir },
            encoding: 'utf8',
          },
        );
        assert.equal(r.status, 0, r.stderr);
        const config = YAML.parse(r.stdout) as {
          services: Record<string, { ports?: Port[]; profiles?: string[] }>;
        };
        // Compose 1 lists the services of every profile, with their profiles; v2 only the active ones.
        const active = Object.entries(config.services).filter(
          ([, c]) => !c.profiles || c.profiles.some((p) => profiles.includes(p)),
        );
        return active.flatMap(([service, svcConfig]) =>
          (svcConfig.ports ?? []).map((p): [string, string, string] => {
            if (typeof p !== 'string') return [service, p.host_ip ?? '', String(p.published ?? p.target)];
            // Compose 1 keeps the short form: [host_ip:]published:target.
            const parts = p.split(':');
            return [service, parts.length === 3 ? (parts[0] ?? '') : '', parts.at(-2) ?? ''];
          }),
        );
      };
      const temporalish = (p: [string, string, string]): boolean =>
        ['7233', '8080'].includes(p[2]) || p[0].startsWith('temporal');
      assert.deepEqual(published(['sandbox', 'ops']).filter(temporalish), []);
      assert.deepEqual(published(['sandbox', 'local-ports']).filter(temporalish).sort(), [
        ['temporal-local-ports', '127.0.0.1', '7233'],
        ['temporal-local-ports', '127.0.0.1', '8080'],
      ]);
    });

  it('publishes the API; Temporal and its UI only with --profile local-ports, on 127.0.0.1, the UI read-only', () => {
    assert.ok(svc('api').ports?.includes('3000:3000'));
    // Whoever can signal a workflow must not reach Temporal (docs/production.md "Temporal is not a side door").
    for (const name of ['temporal', 'temporal-ui', 'temporal-postgresql', 'temporal-admin-tools']) {
      assert.equal(svc(name).ports, undefined, `${name} publishes no port`);
    }
    const forward = svc('temporal-local-ports');
    assert.deepEqual(forward.profiles, ['local-ports']);
    assert.deepEqual(forward.ports, ['127.0.0.1:7233:7233', '127.0.0.1:8080:8080']);
    for (const [name, s] of Object.entries(services)) {
      for (const port of s.ports ?? []) {
        if (/(^|:)(7233|8080)$/.test(port))
          assert.match(port, /^127\.0\.0\.1:/, `${name} binds ${port} to loopback only`);
      }
    }
    assert.equal(env(svc('temporal-ui')).TEMPORAL_ADDRESS, 'temporal:7233', 'the UI points at the compose Temporal');
    assert.equal(env(svc('temporal-ui')).TEMPORAL_DISABLE_WRITE_ACTIONS, 'true', 'the UI is read-only by default');
  });

  it('starts in order: databases healthy → Temporal schema → Temporal → namespace → migrations → API and worker', () => {
    assert.equal(dependsOn('temporal-admin-tools', 'temporal-postgresql'), 'service_healthy');
    assert.equal(dependsOn('temporal', 'temporal-admin-tools'), 'service_completed_successfully');
    assert.equal(dependsOn('temporal-create-namespace', 'temporal'), 'service_healthy');
    assert.equal(dependsOn('temporal-ui', 'temporal'), 'service_healthy');
    assert.equal(dependsOn('migrate', 'postgres'), 'service_healthy');
    for (const app of ['api', 'worker']) {
      assert.equal(dependsOn(app, 'migrate'), 'service_completed_successfully');
      assert.equal(dependsOn(app, 'temporal-create-namespace'), 'service_completed_successfully');
      // Only with the sandbox profile does the simulator exist; then it must be up first.
      assert.deepEqual(svc(app).depends_on?.['acquirer-simulator'], { condition: 'service_healthy', required: false });
    }
  });

  it('has a healthcheck on every service others wait for, and on the API and worker', () => {
    for (const name of [
      'postgres',
      'temporal-postgresql',
      'temporal',
      'temporal-ui',
      'api',
      'worker',
      'acquirer-simulator',
    ]) {
      assert.ok(svc(name).healthcheck?.test, `${name} has a healthcheck`);
    }
    assert.match(JSON.stringify(svc('api').healthcheck?.test), /\/readyz/);
  });

  it('sets Temporal up on PostgreSQL and registers the MerchantId and EntityId search attributes', () => {
    const t = env(svc('temporal'));
    assert.equal(t.DB, 'postgres12');
    assert.equal(t.POSTGRES_SEEDS, 'temporal-postgresql');
    assert.equal(env(svc('temporal-admin-tools')).POSTGRES_SEEDS, 'temporal-postgresql');
    const scriptsDir = path.join(ROOT, 'tools/compose/temporal');
    const setup = fs.readFileSync(path.join(scriptsDir, 'setup-postgres.sh'), 'utf8');
    assert.match(setup, /temporal_visibility/);
    const namespace = fs.readFileSync(path.join(scriptsDir, 'create-namespace.sh'), 'utf8');
    for (const attr of ['MerchantId', 'EntityId']) assert.match(namespace, new RegExp(attr));
    assert.match(namespace, /search-attribute create[^\n]*--type Keyword/);
    for (const name of ['temporal-admin-tools', 'temporal-create-namespace']) {
      assert.ok(
        svc(name).volumes?.some((v) => v.startsWith('./tools/compose/temporal:')),
        `${name} mounts the scripts`,
      );
    }
  });

  it('points the API and worker at the compose PostgreSQL, Temporal and (sandbox) acquirer simulator', () => {
    const sim = svc('acquirer-simulator');
    assert.deepEqual(sim.profiles, ['sandbox']);
    const simEnv = env(sim);
    for (const app of ['api', 'worker', 'migrate']) {
      const e = env(svc(app));
      const url = new URL(fs.readFileSync(appEnv(app).DATABASE_URL_FILE ?? '', 'utf8'));
      assert.equal(url.hostname, 'postgres', `${app} uses the compose PostgreSQL`);
      assert.equal(url.username, 'pixflow_app', `${app} connects as the service's role`);
      assert.ok(svc(app).secrets?.includes('database_url'));
      assert.equal(e.TEMPORAL_ADDRESS, 'temporal:7233', `${app} uses the compose Temporal`);
      const acquirer = new URL(e.ACQUIRER_URL ?? '');
      assert.equal(acquirer.hostname, 'acquirer-simulator');
      assert.equal(acquirer.port, simEnv.SIMULATOR_PORT);
      assert.equal(e.ACQUIRER_SANDBOX, 'true');
      assert.equal(
        e.ACQUIRER_CALLBACK_SECRET,
        simEnv.ACQUIRER_CALLBACK_SECRET,
        'callbacks are signed with the secret the API checks',
      );
    }
    assert.equal(new URL(simEnv.PUBLIC_BASE_URL ?? '').host, 'api:3000', 'the simulator calls the API back');
    // Only the migrations run as the owner role.
    const owner = new URL(fs.readFileSync(appEnv('migrate').DATABASE_MIGRATION_URL_FILE ?? '', 'utf8'));
    assert.equal(owner.username, 'pixflow_owner');
    assert.ok(svc('migrate').secrets?.includes('database_migration_url'));
    for (const app of ['api', 'worker', 'ops']) {
      assert.equal(env(svc(app)).DATABASE_MIGRATION_URL_FILE, undefined, `${app} has no owner URL`);
      assert.ok(!svc(app).secrets?.includes('database_migration_url'), `${app} gets no owner URL`);
    }
    // The postgres image creates both roles on a fresh volume, from the same secrets.
    const pg = svc('postgres');
    assert.ok(pg.volumes?.includes('./tools/compose/init-roles.sh:/docker-entrypoint-initdb.d/10-pixflow-roles.sh:ro'));
    assert.deepEqual(pg.secrets, ['db_superuser_password', 'db_owner_password', 'db_app_password']);
    assert.equal(env(pg).POSTGRES_USER, 'postgres');
  });

  it('gives the API and worker an environment their production configuration accepts', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-config-'));
    try {
      for (const app of ['api', 'worker']) {
        const config = loadConfig({ ...appEnv(app), DATA_DIR: dataDir });
        assert.equal(config.isProduction, true);
        assert.equal(config.ACQUIRER_SANDBOX, true);
        assert.equal(config.ADMIN_EMAIL, 'ops@pixflow.test');
        assert.equal(config.METRICS_TOKEN, 'compose-test-metrics-token');
      }
      const worker = loadConfig({ ...appEnv('worker'), DATA_DIR: dataDir });
      assert.ok(
        worker.METRICS_PORT > 0 && svc('worker').ports?.includes(`${worker.METRICS_PORT}:${worker.METRICS_PORT}`),
      );
      assert.ok(worker.TEMPORAL_METRICS_ADDRESS);
      // A real acquirer must be chosen explicitly: the sandbox secrets are refused without the flag.
      assert.throws(
        () => loadConfig({ ...appEnv('api'), ACQUIRER_SANDBOX: 'false', DATA_DIR: dataDir }),
        /sandbox default/,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
