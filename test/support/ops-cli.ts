/** The ops CLI as an operator runs it: a fresh `src/cli/ops.ts` process against the run's database. */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runOps(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return runOpsWithEnv(databaseUrl, {}, ...args);
}

/** `runOps` with more environment, e.g. the TEMPORAL_ADDRESS of the run's test server. */
export async function runOpsWithEnv(
  databaseUrl: string,
  extraEnv: Record<string, string>,
  ...args: string[]
): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'src/cli/ops.ts'), ...args],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          ADMIN_EMAIL: '',
          ADMIN_PASSWORD: '',
          // Generated development secrets go to a scratch directory, not the checkout's .data/.
          DATA_DIR: path.join(os.tmpdir(), 'pixflow-ops-cli-test'),
          ...extraEnv,
        },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
