// The project's import graph, read with the TypeScript parser (no type checking, so it is fast):
// test/unit/architecture.test.ts checks the layer rules of docs/architecture.md "Layers" over it.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string;
  to: string;
  /** `import type`, or every named binding is `type`: erased at compile time. */
  typeOnly: boolean;
}

export interface SourceModule {
  file: string;
  source: ts.SourceFile;
}

const ROOT = path.resolve(__dirname, '../..');

export function repoRoot(): string {
  return ROOT;
}

/** Every .ts file under the given folders (repo-relative paths, '/' separators). */
export function listSources(folders: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(rel);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  for (const folder of folders) if (fs.existsSync(path.join(ROOT, folder))) walk(folder);
  return out.sort();
}

export function parse(file: string): SourceModule {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return { file, source: ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true) };
}

function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) {
    if (candidate.endsWith('.ts') && fs.existsSync(path.join(ROOT, candidate))) return candidate;
  }
  return undefined;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  if (!bindings || !ts.isNamedImports(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

/** The relative imports of one module (static, re-exports, `import()` and `require()`). */
export function importsOf(module: SourceModule): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean): void => {
    const to = resolveRelative(module.file, specifier);
    if (to) edges.push({ from: module.file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, importIsTypeOnly(node));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.arguments.length === 1 &&
      ts.isStringLiteral(node.arguments[0]!) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      add(node.arguments[0].text, false);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(module.source);
  return edges;
}

/** The import circles (strongly connected components of more than one module, or a self-import). */
export function circles(edges: readonly ImportEdge[], options: { includeTypeOnly: boolean }): string[][] {
  const graph = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.typeOnly && !options.includeTypeOnly) continue;
    const list = graph.get(edge.from) ?? [];
    list.push(edge.to);
    graph.set(edge.from, list);
    if (!graph.has(edge.to)) graph.set(edge.to, []);
  }
  // Tarjan's algorithm, iterative enough for a few hundred modules.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strong = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        strong(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (graph.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) strong(node);
  return components;
}
