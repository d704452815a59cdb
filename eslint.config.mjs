// ESLint for the whole repository (CONTRIBUTING.md "Lint and format"): typescript-eslint's
// recommended rules on every TypeScript file, plus three typed promise rules; `npm run lint` runs it
// after the type check.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '**/.build/**',
      'dist/**',
      '.data/**',
      'coverage/**',
      '.test-output/**',
      // The official Temporal binaries fetched by npm install (tools/temporal-binaries).
      '.tools/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Typed rules: the project service finds tsconfig.json or dashboard/tsconfig.json for each file.
    // recommendedTypeChecked measured ~920 findings of other rules (no-unsafe-*, require-await,
    // no-unnecessary-type-assertion): only the promise rules are on, an unawaited money path being the bug.
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // A warning, not an error: it points at the long functions STYLE.md would split.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    rules: { 'max-lines-per-function': ['warn', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['**/*.ts'],
    rules: {
      // Unused parameters named `_…` mark a signature kept on purpose (handlers, activities).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // `import root = require(…)` is how the compiled proto root (a CommonJS module) is typed;
      // autocannon ships no ES module types.
      '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true, allow: ['^autocannon$'] }],
      // A `let` a closure reads before the workflow assigns it cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Scripts run by node directly (CommonJS preloads such as bench/memory-census.cjs).
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-empty': ['error', { allowEmptyCatch: true }] },
  },
);
