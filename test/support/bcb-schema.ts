/**
 * Validates what our acquirer client and simulator exchange against the Banco Central's API Pix
 * OpenAPI document, found by configuration (test/support/external-artefacts.ts). Without it no body
 * is validated: `bcbChecksRun` stays 0 and each suite's conformance test is reported pending.
 */
import fs from 'node:fs';
import assert from 'node:assert/strict';
import { bcbPixOpenApi, needing } from './external-artefacts';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

export const BCB_DOCUMENT = bcbPixOpenApi();
/** How many bodies were validated (a suite's conformance test proves its checks ran). */
let bcbChecksRun = 0;

let ajv: Ajv | undefined;
let document: Record<string, unknown> | undefined;

/**
 * A few patterns in the published document are written with JavaScript delimiters
 * (`"/^\\d{11}$/"` for devedor.cpf), which as JSON Schema would match no CPF at all. Strip them.
 */
function normalisePatterns(node: unknown): Record<string, unknown> {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object') {
      const o = n as Record<string, unknown>;
      if (typeof o.pattern === 'string' && /^\/.+\/$/.test(o.pattern)) o.pattern = o.pattern.slice(1, -1);
      Object.values(o).forEach(walk);
    }
  };
  walk(node);
  return node as Record<string, unknown>;
}
const cache = new Map<string, ValidateFunction>();

function load(): Ajv {
  if (ajv) return ajv;
  if (!BCB_DOCUMENT.path) throw new Error(BCB_DOCUMENT.reason);
  const doc = normalisePatterns(parse(fs.readFileSync(BCB_DOCUMENT.path, 'utf8')));
  document = doc;
  // OpenAPI 3.0 schema objects carry keywords JSON Schema does not know (nullable, example, …).
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'bcb');
  return ajv;
}

/**
 * The violations of `components/schemas/<name>` (empty when valid). Without the document there is
 * nothing to validate against: empty, and not counted in `bcbChecksRun`.
 */
export function bcbViolations(schemaName: string, value: unknown): string[] {
  if (!BCB_DOCUMENT.path) return [];
  bcbChecksRun++;
  let v = cache.get(schemaName);
  if (!v) {
    v = load().compile({ $ref: `bcb#/components/schemas/${schemaName}` });
    cache.set(schemaName, v);
  }
  return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

/**
 * Declares, inside a suite that calls `bcbViolations`, its last test: that the suite's bodies were
 * validated against the document — or, without the document, a pending test saying why.
 */
export function itConformsToTheBcbDocument(): void {
  const title = needing(BCB_DOCUMENT, 'validated the bodies exchanged above against the BCB API Pix document');
  // A nested suite declared last runs after the calling suite's tests and its other nested suites.
  if (!BCB_DOCUMENT.path) {
    describe('BCB API Pix conformance', () => it(title));
    return;
  }
  let atStart = 0;
  before(() => {
    atStart = bcbChecksRun;
  });
  describe('BCB API Pix conformance', () =>
    it(title, () => assert.ok(bcbChecksRun > atStart, 'no body was validated')));
}

/** `components/examples/<name>/value`, or a part of it by a `/`-separated path (`name/recs/0`). */
export function bcbExample(path: string): unknown {
  load();
  const [name, ...rest] = path.split('/');
  const examples = (document?.components as { examples?: Record<string, { value?: unknown }> }).examples ?? {};
  let node: unknown = examples[name ?? '']?.value;
  for (const key of rest) node = (node as Record<string, unknown> | undefined)?.[key];
  if (node === undefined) throw new Error(`the BCB document has no example ${path}`);
  return node;
}

/**
 * The violations of `value` that the document's own example of the same schema does not also
 * have. Where the document contradicts itself (Pix Automático: a required property it never
 * defines, a typo in a `required` list, a scheme-less `uri`), its example fails those same checks,
 * and conforming cannot mean more than matching what the document shows. Without the document: [].
 */
export function bcbViolationsBeyondExample(schemaName: string, value: unknown, examplePath: string): string[] {
  if (!BCB_DOCUMENT.path) return [];
  const own = new Set(bcbViolations(schemaName, bcbExample(examplePath)));
  return bcbViolations(schemaName, value).filter((v) => !own.has(v));
}
