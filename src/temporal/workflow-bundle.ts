/**
 * The worker's workflow bundle, built in a child process (docs/performance.md "Where a charge's time goes"):
 * webpack keeps about 110 MB resident in whatever process has bundled, which would count against
 * the service's memory for its whole life. The child writes the bundle to a temporary file that
 * the worker loads. Should the child fail (an unusual runtime), the caller bundles in-process.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Resolves with the bundle's code, with `interceptorModules` (workflow interceptor modules) bundled in. */
export async function bundleWorkflowsInChild(interceptorModules: readonly string[] = []): Promise<string> {
  const ext = path.extname(__filename);
  const script = path.join(__dirname, `workflow-bundle-child${ext}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pixflow-workflows-'));
  const out = path.join(dir, 'bundle.js');
  try {
    // Under tsx (npm start) the child loads tsx too, resolved from the project's root.
    const loader = ext === '.ts' ? ['--import', 'tsx'] : [];
    await run(process.execPath, [...loader, script, out, ...interceptorModules], {
      cwd: path.resolve(__dirname, '../..'),
      maxBuffer: 16 * 1024 * 1024,
      timeout: 300_000,
    });
    return fs.readFileSync(out, 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
