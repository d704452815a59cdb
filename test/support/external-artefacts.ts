/**
 * Checks that need something from outside the repository (docs/testing.md "External artefacts"):
 * the Banco Central's API Pix OpenAPI document and a Chromium. Each is found by configuration —
 * BCB_PIX_OPENAPI, CHROMIUM_PATH or a `chromium` on PATH — and, when absent, its checks are
 * reported as pending with the reason, never installed by the suite. `.ci/run` provides both.
 */
import fs from 'node:fs';
import path from 'node:path';

export type Artefact = { path: string; reason?: undefined } | { path?: undefined; reason: string };

/** The BCB API Pix OpenAPI document: BCB_PIX_OPENAPI, else `../shared/` beside the checkout. */
export function bcbPixOpenApi(): Artefact {
  const configured = process.env.BCB_PIX_OPENAPI;
  if (configured) {
    return fs.existsSync(configured)
      ? { path: configured }
      : { reason: `BCB_PIX_OPENAPI=${configured} does not exist` };
  }
  const beside = path.resolve(__dirname, '../../../shared/bcb-pix-api-openapi.yaml');
  if (fs.existsSync(beside)) return { path: beside };
  return { reason: 'the BCB API Pix OpenAPI document was not found: set BCB_PIX_OPENAPI to its path' };
}

/** A Chromium for playwright-core: CHROMIUM_PATH, else `chromium` or `chromium-browser` on PATH. */
export function chromiumBrowser(): Artefact {
  const configured = process.env.CHROMIUM_PATH;
  if (configured)
    return isExecutable(configured)
      ? { path: configured }
      : { reason: `CHROMIUM_PATH=${configured} is not an executable` };
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const candidate = path.join(dir, name);
      if (dir && isExecutable(candidate)) return { path: candidate };
    }
  }
  return { reason: "no Chromium: put chromium on PATH or set CHROMIUM_PATH (npm run setup:browser installs Debian's)" };
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The title of a test that needs `artefact`: its own when present, with the reason it is pending when not. */
export const needing = (artefact: Artefact, title: string): string =>
  artefact.path ? title : `${title} — pending: ${artefact.reason}`;
