/**
 * Validates what our acquirer client and simulator exchange against the Banco Central's API Pix
 * OpenAPI document (shared/bcb-pix-api-openapi.yaml, beside the repository as CI has it).
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const SPEC = path.resolve(__dirname, '../../../shared/bcb-pix-api-openapi.yaml');

let ajv: Ajv | undefined;

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
  if (!fs.existsSync(SPEC)) throw new Error(`BCB API Pix spec not found at ${SPEC} (shared/ must sit beside the repo)`);
  const doc = normalisePatterns(parse(fs.readFileSync(SPEC, 'utf8')));
  // OpenAPI 3.0 schema objects carry keywords JSON Schema does not know (nullable, example, …).
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'bcb');
  return ajv;
}

/** Returns the list of violations of `components/schemas/<name>` (empty when valid). */
export function bcbViolations(schemaName: string, value: unknown): string[] {
  let v = cache.get(schemaName);
  if (!v) {
    v = load().compile({ $ref: `bcb#/components/schemas/${schemaName}` });
    cache.set(schemaName, v);
  }
  return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
