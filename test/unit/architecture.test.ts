/**
 * The layer rules of docs/architecture.md "Layers", checked over the import graph (read with the
 * TypeScript parser): no import circles (between files, nor of runtime imports between folders), no
 * upward imports, SQL only in the stores, services built only in the composition root. A failure
 * names the file and the import or line that breaks a rule.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { circles, importsOf, listSources, parse, type ImportEdge, type SourceModule } from '../support/import-graph';

/**
 * Lowest first; a module may import its own layer or a lower one. Matched by longest prefix.
 * `workflows/*-types.ts` are the plain types workflows share with their clients: contracts.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['src/lib/', 'src/observability/', 'src/config.ts'],
  ['src/pix/'],
  ['src/contracts/', 'workflows/*-types.ts'],
  ['src/domain/'],
  ['src/models/', 'src/db/', 'migrations/'],
  ['src/stores/'],
  ['src/acquirer/', 'src/temporal/', 'src/openapi/'],
  ['src/services/'],
  ['activities/', 'src/http/'],
  ['workflows/'],
  ['src/runtime/', 'src/process/'],
  ['src/cli/'],
];

/** Upward imports allowed, each with its reason. */
const UPWARD_ALLOWED: ReadonlyArray<{ from: RegExp; to: RegExp; typeOnly: true; why: string }> = [
  {
    from: /^src\/temporal\//,
    to: /^workflows\/[a-z-]+\.ts$/,
    typeOnly: true,
    why: 'a workflow client is typed by the workflow function it starts (the workflow bundle is never loaded by the API)',
  },
];

function layerOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((patterns, rank) => {
    for (const pattern of patterns) {
      const matches = pattern.includes('*')
        ? new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace('*', '[^/]*')}$`).test(file)
        : pattern.endsWith('/')
          ? file.startsWith(pattern)
          : file === pattern;
      if (matches && pattern.length > bestLength) {
        best = rank;
        bestLength = pattern.length;
      }
    }
  });
  return best;
}

export function upwardImports(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (from < 0 || to < 0 || to <= from) continue;
    if (UPWARD_ALLOWED.some((rule) => rule.from.test(edge.from) && rule.to.test(edge.to) && edge.typeOnly)) continue;
    out.push(`${edge.from} → ${edge.to}${edge.typeOnly ? ' (type-only)' : ''}`);
  }
  return out;
}

/** A file's folder for the folder rule; each `src/services/<domain>/` is its own. */
export function folderOf(file: string): string {
  return /^src\/services\/[^/]+(?=\/)/.exec(file)?.[0] ?? path.posix.dirname(file);
}

/** Parent and child folders that may import each other (and nothing more may join them), with why. */
const FOLDER_PAIRS_ALLOWED: ReadonlyArray<{ folders: readonly [string, string]; why: string }> = [
  {
    folders: ['src/acquirer', 'src/acquirer/simulator'],
    why: 'the acquirer client starts the in-process simulator, which speaks the wire defined beside the client',
  },
  {
    folders: ['src/temporal', 'src/temporal/clients'],
    why: 'the clients are assembled by their parent and name workflows by its id and search-attribute helpers',
  },
  { folders: ['src/http', 'src/http/routes'], why: 'the app mounts the routes, which use its guards and validation' },
];

/** Circles of runtime imports between folders (docs/architecture.md "Layers"), allowed pairs left out. */
export function folderCircles(edges: readonly ImportEdge[], pairs = FOLDER_PAIRS_ALLOWED): string[][] {
  const between = edges
    .filter((edge) => !edge.typeOnly)
    .map((edge) => ({ from: folderOf(edge.from), to: folderOf(edge.to), typeOnly: false }))
    .filter((edge) => edge.from !== edge.to);
  const allowed = new Set(pairs.map(({ folders }) => [...folders].sort().join(' ↔ ')));
  return circles(between, { includeTypeOnly: false }).filter((circle) => !allowed.has(circle.join(' ↔ ')));
}

/**
 * SQL outside the stores: a knex query started (`knex(…)`, `trx(…)`, `db(…)`), a raw query, an
 * objection `Model.query(…)`. Files where the SQL *is* the rule stay beside it (docs/architecture.md
 * "Layers" lists them and says why).
 */
const SQL_PATTERNS: readonly RegExp[] = [
  /\b(knex|trx|db|tx|q)\s*\(\s*['"`][a-z_]+/,
  /\.raw\s*\(/,
  /\b[A-Z][A-Za-z]+\.query\s*\(/,
  /\.(whereRaw|joinRaw|selectRaw|orderByRaw|fromRaw)\s*\(/,
];
const SQL_HOMES: readonly RegExp[] = [/^src\/stores\//, /^src\/db\//, /^migrations\//];
const SQL_BESIDE_ITS_RULE = new Set([
  'src/services/ledger/ledger.ts',
  'src/services/ledger/invariant.ts',
  'src/services/accounts/rate-limits.ts',
  'src/services/platform/cache-invalidation.ts',
  'src/services/webhooks/dispatcher.ts',
]);

export function sqlOutsideStores(modules: readonly SourceModule[]): string[] {
  const out: string[] = [];
  for (const { file, source } of modules) {
    if (SQL_HOMES.some((home) => home.test(file)) || SQL_BESIDE_ITS_RULE.has(file)) continue;
    source.text.split('\n').forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (/^\s*(\*|\/\*)/.test(code)) return;
      if (SQL_PATTERNS.some((pattern) => pattern.test(code))) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

/** A service factory: `createXService(`, `createXLifecycle(`, … (the exports of src/services). */
const SERVICE_FACTORY =
  /\bcreate[A-Z][A-Za-z]*(Service|Lifecycle|Sandbox|Callbacks|CallbackHandlers?|Registration|Dispatcher|Delivery|Inbox|OperatorCases)\s*\(/;
const ROOT = path.resolve(__dirname, '../..');
const COMPOSITION_ROOT = 'src/runtime/composition.ts';

export function compositionOutsideRoot(modules: readonly SourceModule[]): string[] {
  const out: string[] = [];
  for (const { file, source } of modules) {
    if (file === COMPOSITION_ROOT) continue;
    source.text.split('\n').forEach((line, i) => {
      if (/^\s*(\*|\/\/|\/\*)/.test(line) || /\bfunction\s+create/.test(line)) return;
      if (SERVICE_FACTORY.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

const APP = ['src', 'activities', 'workflows'];

describe('architecture (docs/architecture.md "Layers")', () => {
  const modules = listSources(APP).map(parse);
  const edges = modules.flatMap(importsOf);

  it('every module of the app belongs to a layer', () => {
    const unplaced = modules.map((m) => m.file).filter((file) => layerOf(file) < 0);
    assert.deepEqual(unplaced, []);
  });

  it('has no import circles (type-only imports count)', () => {
    assert.deepEqual(circles(edges, { includeTypeOnly: true }), []);
  });

  it('nothing in the tree implements the Temporal server: the official binaries run it', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
    assert.deepEqual(
      tracked.filter((f) => /^tools\/(embedded-temporal|temporal-ui)\/|WorkflowService(Handler|Impl)/.test(f)),
      [],
    );
  });

  it('has no circles of runtime imports between folders (src/services/<domain> each its own)', () => {
    assert.deepEqual(folderCircles(edges), []);
    // The list only shrinks: a pair that no longer loops leaves it.
    const looping = new Set(folderCircles(edges, []).map((circle) => circle.join(' ↔ ')));
    assert.deepEqual(
      FOLDER_PAIRS_ALLOWED.map(({ folders }) => folders.join(' ↔ ')).filter((pair) => !looping.has(pair)),
      [],
    );
  });

  it('imports only downward', () => {
    assert.deepEqual(upwardImports(edges), []);
  });

  it('keeps SQL in the stores', () => {
    assert.deepEqual(sqlOutsideStores(modules), []);
  });

  it('builds services only in the composition root (the app and the test support)', () => {
    const support = listSources(['test/support']).map(parse);
    const found = compositionOutsideRoot([...modules, ...support]);
    const files = new Set(found.map((line) => line.slice(0, line.indexOf(':'))));
    assert.deepEqual(
      found.filter((line) => !COMPOSITION_STILL_OPEN.has(line.slice(0, line.indexOf(':')))),
      [],
    );
    // The list only shrinks: a file that no longer builds services leaves it.
    assert.deepEqual(
      [...COMPOSITION_STILL_OPEN].filter((file) => !files.has(file)),
      [],
    );
  });

  it('each rule fails on a planted violation', () => {
    const planted = (file: string, text: string): SourceModule => {
      const module = parse('src/lib/logger.ts');
      return {
        file,
        source: module.source.update(text, {
          span: { start: 0, length: module.source.text.length },
          newLength: text.length,
        }),
      };
    };
    assert.deepEqual(
      upwardImports([{ from: 'src/stores/charges.ts', to: 'src/services/charges/charges.ts', typeOnly: true }]),
      ['src/stores/charges.ts → src/services/charges/charges.ts (type-only)'],
    );
    assert.deepEqual(
      circles(
        [
          { from: 'src/a.ts', to: 'src/b.ts', typeOnly: false },
          { from: 'src/b.ts', to: 'src/a.ts', typeOnly: true },
        ],
        { includeTypeOnly: true },
      ),
      [['src/a.ts', 'src/b.ts']],
    );
    const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });
    assert.deepEqual(
      folderCircles([
        edge('src/services/platform/events.ts', 'src/services/webhooks/delivery.ts'),
        edge('src/services/webhooks/secrets.ts', 'src/services/platform/audit.ts'),
      ]),
      [['src/services/platform', 'src/services/webhooks']],
    );
    assert.deepEqual(
      folderCircles([
        edge('src/services/platform/events.ts', 'src/services/webhooks/delivery.ts'),
        edge('src/services/webhooks/secrets.ts', 'src/services/platform/audit.ts', true),
        edge('src/http/app.ts', 'src/http/routes/auth.ts'),
        edge('src/http/routes/auth.ts', 'src/http/validation.ts'),
      ]),
      [],
    );
    assert.deepEqual(
      folderCircles([
        edge('src/http/app.ts', 'src/http/routes/auth.ts'),
        edge('src/http/routes/auth.ts', 'src/services/accounts/auth.ts'),
        edge('src/services/accounts/auth.ts', 'src/http/validation.ts'),
      ]),
      [['src/http', 'src/http/routes', 'src/services/accounts']],
    );
    assert.equal(sqlOutsideStores([planted('src/services/x.ts', "await knex('charges').where({ id });\n")]).length, 1);
    assert.equal(sqlOutsideStores([planted('src/http/app.ts', "knex.raw('select 1')\n")]).length, 1);
    assert.equal(sqlOutsideStores([planted('src/stores/x.ts', "await knex('charges').where({ id });\n")]).length, 0);
    assert.equal(
      compositionOutsideRoot([planted('src/cli/ops.ts', 'const inbox = createCallbackInbox({ knex });\n')]).length,
      1,
    );
    assert.equal(
      compositionOutsideRoot([planted(COMPOSITION_ROOT, 'const inbox = createCallbackInbox({ knex });\n')]).length,
      0,
    );
  });
});

/**
 * Open work of issue 27, to shrink: the acquirer callbacks build their own inbox (its handlers are the
 * service's own functions), and the workflow test harnesses build their services by hand.
 */
const COMPOSITION_STILL_OPEN = new Set([
  'src/services/inbox/acquirer-callbacks.ts',
  'test/support/charges.ts',
  'test/support/med.ts',
  'test/support/webhooks.ts',
  'test/support/withdrawals.ts',
]);
