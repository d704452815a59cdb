/**
 * Functions a reader can step into (CONTRIBUTING.md "Lint and format"): no function of `src/`,
 * `workflows/` or `activities/` over 60 lines (blank lines and comments not counted) beyond the
 * ones named in test/unit/long-functions.json, each at most as long as it is listed. The list can
 * only shrink: a listed function that grew fails, and so does one that no longer needs its entry.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = path.resolve(__dirname, '../..');
const MAX_LINES = 60;
const LIST_FILE = path.join(__dirname, 'long-functions.json');

interface LongFunction {
  /** `path/of/file.ts: name`, anonymous functions as `(arrow 1)`, `(arrow 2)`… in file order. */
  fn: string;
  lines: number;
}

/**
 * ESLint with the one rule eslint.config.mjs warns with, untyped: seconds, not the typed lint's
 * minute. The plugin is loaded so that the code's `eslint-disable` comments name known rules.
 */
const lengthLinter = (): ESLint =>
  new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        plugins: { '@typescript-eslint': tseslint.plugin },
        languageOptions: { parser: tseslint.parser },
        linterOptions: { reportUnusedDisableDirectives: 'off' },
        rules: { 'max-lines-per-function': ['error', { max: MAX_LINES, skipBlankLines: true, skipComments: true }] },
      },
    ],
  });

/** Every function over MAX_LINES lines. */
async function longFunctions(): Promise<LongFunction[]> {
  const results = await lengthLinter().lintFiles(['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts']);
  const found: LongFunction[] = [];
  for (const result of results) {
    const file = path.relative(ROOT, result.filePath);
    let anonymous = 0;
    for (const m of result.messages) {
      assert.equal(m.ruleId, 'max-lines-per-function', `${file}:${m.line}: ${m.message}`);
      const named = /'([^']+)' has too many lines \((\d+)\)/.exec(m.message);
      const lines = Number(/\((\d+)\)/.exec(m.message)?.[1]);
      found.push({ fn: `${file}: ${named?.[1] ?? `(arrow ${++anonymous})`}`, lines });
    }
  }
  return found.sort((a, b) => a.fn.localeCompare(b.fn));
}

describe('function length', function () {
  this.timeout(120_000);

  it(`has no function over ${MAX_LINES} lines but the listed ones, none longer than listed`, async () => {
    const listed = new Map(
      (JSON.parse(fs.readFileSync(LIST_FILE, 'utf8')) as LongFunction[]).map((f) => [f.fn, f.lines]),
    );
    const problems: string[] = [];
    const found = await longFunctions();
    for (const f of found) {
      const allowed = listed.get(f.fn);
      if (allowed === undefined) problems.push(`${f.fn} has ${f.lines} lines: split it (at most ${MAX_LINES})`);
      else if (f.lines > allowed) problems.push(`${f.fn} grew to ${f.lines} lines (listed at ${allowed})`);
    }
    const seen = new Set(found.map((f) => f.fn));
    for (const fn of listed.keys())
      if (!seen.has(fn)) problems.push(`${fn} is ${MAX_LINES} lines or fewer now: remove it from long-functions.json`);
    assert.deepEqual(problems, []);
  });

  it('fails on a planted long function', async () => {
    const body = Array.from({ length: MAX_LINES + 1 }, (_, i) => `  total += ${i};`).join('\n');
    const [result] = await lengthLinter().lintText(
      `export function planted(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`,
      {
        filePath: path.join(ROOT, 'src/planted.ts'),
      },
    );
    assert.deepEqual(
      result.messages.map((m) => m.ruleId),
      ['max-lines-per-function'],
    );
  });
});
