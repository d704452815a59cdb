/**
 * The Temporal UI's static build that `npm start` serves beside its embedded Temporal server
 * (docs/operations.md "Watching workflows"): built from the registry's @temporalio/ui by
 * tools/temporal-ui's own script on first start, and again only when its inputs change (the
 * script keeps a stamp of them in the build folder, which git ignores).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';

export const UI_PACKAGE_DIR = path.resolve(__dirname, '..', '..', 'tools', 'temporal-ui');
export const UI_BUILD_DIR = path.join(UI_PACKAGE_DIR, 'build');
const BUILD_SCRIPT = path.join(UI_PACKAGE_DIR, 'scripts', 'build.mjs');
/** The last build's output (git-ignored). */
const BUILD_LOG = path.join(UI_PACKAGE_DIR, '.build.log');

export interface UiBuild {
  /** `ready` once the build folder is current; `failed` if it could not be built (the UI page says so). */
  done: Promise<'ready' | 'failed'>;
  /** Whether `done` has settled. */
  settled(): boolean;
}

/** The check's answer: 0 current, 10 missing or stale, anything else the script failed. */
function check(): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BUILD_SCRIPT, '--check'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    c.stdout.on('data', (d: Buffer) => (output += d.toString()));
    c.stderr.on('data', (d: Buffer) => (output += d.toString()));
    c.on('error', (err) => resolve({ code: -1, output: String(err) }));
    c.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

/**
 * Makes the UI's build folder current, beside the rest of the start-up: a check (well under a
 * second), and when it is missing or stale a build with a progress line. The build runs detached
 * with its output in a log file, so it completes even if this process stops first (the next
 * start then finds it current rather than starting over); the script's lock keeps it to one
 * build at a time.
 */
export function startUiBuild(logger: Logger): UiBuild {
  let settled = false;
  const done = (async (): Promise<'ready' | 'failed'> => {
    const checked = await check();
    if (checked.code === 0) return 'ready';
    if (checked.code !== 10) {
      logger.warn({ output: checked.output.trim() }, 'Temporal UI unavailable: its build check failed (npm install?)');
      return 'failed';
    }
    const t0 = Date.now();
    logger.info(
      { dir: path.relative(process.cwd(), UI_BUILD_DIR), log: path.relative(process.cwd(), BUILD_LOG) },
      'building the Temporal UI (first start or changed inputs; a minute or two; TEMPORAL_UI=off skips it)',
    );
    const log = fs.openSync(BUILD_LOG, 'w');
    const code = await new Promise<number>((resolve) => {
      const c = spawn(process.execPath, [BUILD_SCRIPT, '--if-stale'], { stdio: ['ignore', log, log], detached: true });
      c.on('error', () => resolve(-1));
      c.on('exit', (exit) => resolve(exit ?? -1));
      c.unref();
      // Below the service's own threads: the build must not slow requests or workflows on a small machine.
      if (c.pid !== undefined) {
        try {
          os.setPriority(c.pid, 10);
        } catch {
          // not permitted here: it builds at normal priority
        }
      }
    }).finally(() => fs.closeSync(log));
    if (code !== 0) {
      const output = fs.readFileSync(BUILD_LOG, 'utf8').slice(-4000).trim();
      logger.warn({ output }, 'Temporal UI build failed: running without the UI');
      return 'failed';
    }
    logger.info({ seconds: Math.round((Date.now() - t0) / 100) / 10 }, 'Temporal UI built');
    return 'ready';
  })().finally(() => {
    settled = true;
  });
  return { done, settled: () => settled };
}
