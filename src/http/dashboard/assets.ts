/**
 * The built dashboard (tools/dashboard/src/build.ts writes it into dashboard/.build): a fixed set of
 * files, found beside the sources (`tsx`) or beside the compiled tree (`dist/`).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Each file the build writes, with its content type. */
export const DASHBOARD_FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

const CANDIDATES = [
  path.resolve(__dirname, '../../../dashboard/.build'),
  path.resolve(__dirname, '../../../../dashboard/.build'),
];

/** The folder holding a complete build, or undefined when the dashboard has not been built. */
export function dashboardBuildDir(): string | undefined {
  return CANDIDATES.find((dir) => Object.keys(DASHBOARD_FILES).every((f) => fs.existsSync(path.join(dir, f))));
}
