/**
 * docker-compose.yml, checked without a Docker engine: the services of the production shape,
 * their images, ports, start order and healthchecks, and that the API and worker are wired to the
 * compose PostgreSQL, Temporal and (sandbox profile) acquirer simulator, with an environment the
 * service's own configuration accepts in production.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config';

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
  };
  const services = compose.services;
  const svc = (name: string): Service => {
    const s = services[name];
    assert.ok(s, `service ${name} exists`);
    return s;
  };
  const image = (name: string): string => interpolate(svc(name).image ?? '');
  const dependsOn = (name: string, on: string): string | undefined => svc(name).depends_on?.[on]?.condition;

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

  it('runs commands that exist in package.json', () => {
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const expected: Record<string, string> = {
      migrate: 'migrate',
      api: 'api',
      worker: 'worker',
      'acquirer-simulator': 'simulator',
    };
    for (const [name, script] of Object.entries(expected)) {
      assert.deepEqual(svc(name).command, ['npm', 'run', script]);
      assert.ok(scripts[script], `npm run ${script} exists`);
    }
  });

  it('publishes the API, the Temporal frontend and the Temporal UI', () => {
    assert.ok(svc('api').ports?.includes('3000:3000'));
    assert.ok(svc('temporal').ports?.includes('7233:7233'));
    assert.ok(svc('temporal-ui').ports?.includes('8080:8080'));
    assert.equal(env(svc('temporal-ui')).TEMPORAL_ADDRESS, 'temporal:7233', 'the UI points at the compose Temporal');
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
    for (const name of ['postgres', 'temporal-postgresql', 'temporal', 'api', 'worker', 'acquirer-simulator']) {
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
      assert.equal(new URL(e.DATABASE_URL ?? '').hostname, 'postgres', `${app} uses the compose PostgreSQL`);
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
  });

  it('gives the API and worker an environment their production configuration accepts', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-config-'));
    try {
      for (const app of ['api', 'worker']) {
        const config = loadConfig({ ...env(svc(app)), DATA_DIR: dataDir });
        assert.equal(config.isProduction, true);
        assert.equal(config.ACQUIRER_SANDBOX, true);
      }
      const worker = loadConfig({ ...env(svc('worker')), DATA_DIR: dataDir });
      assert.ok(
        worker.METRICS_PORT > 0 && svc('worker').ports?.includes(`${worker.METRICS_PORT}:${worker.METRICS_PORT}`),
      );
      assert.ok(worker.TEMPORAL_METRICS_ADDRESS);
      // A real acquirer must be chosen explicitly: the sandbox secrets are refused without the flag.
      assert.throws(
        () => loadConfig({ ...env(svc('api')), ACQUIRER_SANDBOX: 'false', DATA_DIR: dataDir }),
        /sandbox default/,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
