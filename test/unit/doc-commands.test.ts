/**
 * Every shell command in the repository's markdown names things that exist (docs/testing.md
 * "Commands in the docs"): `npm run <script>` a script of package.json (or of the `-w` workspace),
 * `npx mocha|tsx <path>` and `sh|bash <path>` a file or folder of the repository. The guides whose
 * blocks run against `npm start` (README's first steps, docs/api.md, docs/operations.md: the e2e
 * tests) are checked here too; elsewhere a block that needs a running service (curl, docker) says
 * why it is not run with a `<!-- not-run: … -->` marker.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, shellBlocks, type Block } from '../support/shell-blocks';

const RUN_AGAINST_NPM_START = new Set(['README.md', 'docs/api.md', 'docs/operations.md']);

const markdown = (): string[] =>
  execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !f.startsWith('node_modules/') && fs.existsSync(path.join(ROOT, f)));

const scriptsOf = (dir: string): Record<string, string> =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> })
    .scripts ?? {};

/** The commands of a block: one per line (continuations joined), split at `&&`, `;` and `|`. */
function commands(code: string): string[][] {
  return code
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((l) => l.split(/&&|\|\||;|\|/))
    .map((c) =>
      c
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .filter((w, i, all) => !(/^[A-Z_]+=/.test(w) && all.slice(0, i).every((x) => /^[A-Z_]+=/.test(x)))),
    )
    .filter((words) => words.length > 0);
}

/** What is wrong with one command, if anything. */
function problems(block: Block, words: string[]): string[] {
  const where = `${block.file}:${block.line}: ${words.join(' ')}`;
  const [cmd, ...args] = words;
  const exists = (p: string): boolean => {
    const clean = p.replace(/^['"]|['"]$/g, '');
    const fixed = clean.split('*')[0] ?? clean; // a glob: its fixed prefix must exist
    return fs.existsSync(path.join(ROOT, fixed));
  };
  if (cmd === 'npm' && args[0] === 'run') {
    // The project has no workspaces: every script is the root package's.
    const rest = args.slice(1).filter((a) => a !== '-s' && a !== '--silent');
    const script = rest[0];
    return script && script in scriptsOf('.') ? [] : [`${where}: no npm script "${script}" in package.json`];
  }
  if (cmd === 'npx' && (args[0] === 'mocha' || args[0] === 'tsx')) {
    const paths = args.slice(1).filter((a) => !a.startsWith('-') && !a.startsWith('[') && /[/.]/.test(a));
    const grep = args.indexOf('--grep');
    return paths
      .filter((p, i) => !(grep >= 0 && args.indexOf(p) === grep + 1) && i >= 0)
      .filter((p) => !exists(p))
      .map((p) => `${where}: ${p} does not exist`);
  }
  if ((cmd === 'sh' || cmd === 'bash') && args[0] && !args[0].startsWith('-'))
    return exists(args[0]) ? [] : [`${where}: ${args[0]} does not exist`];
  return [];
}

describe('commands in the docs (docs/testing.md "Commands in the docs")', () => {
  const files = markdown();
  const blocks = files.flatMap((f) => shellBlocks(f));

  it('finds the guides and their shell blocks', () => {
    for (const f of ['README.md', 'CONTRIBUTING.md', 'docs/api.md', 'docs/operations.md', 'docs/production.md'])
      assert.ok(files.includes(f), f);
    assert.ok(blocks.length >= 15, `${blocks.length} blocks`);
  });

  it('names only npm scripts, files and folders that exist', () => {
    assert.deepEqual(
      blocks.flatMap((b) => commands(b.code).flatMap((words) => problems(b, words))),
      [],
    );
  });

  it('marks every block that needs a running service and is not run by a test', () => {
    const unmarked = blocks
      .filter((b) => !RUN_AGAINST_NPM_START.has(b.file) && !b.notRun)
      .filter((b) => commands(b.code).some(([cmd]) => cmd === 'curl' || cmd === 'docker'))
      .map((b) => `${b.file}:${b.line}`);
    assert.deepEqual(unmarked, []);
  });

  it('fails on a script, a file or an unmarked block that is not there', () => {
    const block: Block = { file: 'x.md', line: 1, code: '' };
    assert.equal(problems(block, ['npm', 'run', 'no-such-script']).length, 1);
    assert.equal(problems(block, ['npx', 'mocha', 'test/api/no-such.test.ts']).length, 1);
    assert.equal(problems(block, ['sh', 'tools/no-such.sh']).length, 1);
    assert.deepEqual(problems(block, ['npm', 'run', '-s', 'ops', '--', 'merchants', 'list']), []);
    assert.deepEqual(problems(block, ['npx', 'mocha', "'test/workflow/**/*.test.ts'"]), []);
    assert.deepEqual(commands('A=1 B=2 npm run bench # why\nx && y | z'), [
      ['npm', 'run', 'bench'],
      ['x'],
      ['y'],
      ['z'],
    ]);
  });
});
