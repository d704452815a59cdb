/**
 * The typed promise rules of eslint.config.mjs (CONTRIBUTING.md "Lint and format") really run: a
 * planted unawaited settlement and an async callback handed to forEach are reported. The plant is
 * text linted under this file's path (a file of tsconfig.json), so `npm run lint` never sees it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.resolve(__dirname, '../..');

const PLANTED = `declare function settle(chargeId: string): Promise<void>;

export async function onPaid(chargeIds: string[]): Promise<void> {
  settle(chargeIds[0]);
  chargeIds.forEach(async (id) => {
    await settle(id);
  });
  await chargeIds.length;
}
`;

describe('lint rules', function () {
  it('reports a floating promise, a promise where a void callback is expected and a non-thenable await', async function () {
    // The project service type-checks the whole tsconfig.json program once: seconds on a shared machine.
    this.timeout(120_000);
    const eslint = new ESLint({ cwd: ROOT });
    const [result] = await eslint.lintText(PLANTED, { filePath: __filename });
    const found = result.messages
      .filter((m) => m.severity === 2)
      .map((m) => `${m.line} ${m.ruleId ?? m.message}`)
      .sort();
    assert.deepEqual(found, [
      '4 @typescript-eslint/no-floating-promises',
      '5 @typescript-eslint/no-misused-promises',
      '8 @typescript-eslint/await-thenable',
    ]);
  });
});
