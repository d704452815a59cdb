/**
 * Stores and services as modules of named functions (CONTRIBUTING.md "Layout"): each function takes
 * its context (a store's `db`, a service's dependencies) first, and `bindContext` gives callers the
 * object they always had, `store(db).method(...)`, so a reader can jump to each function by name.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `any[]` is the only parameter list every function is assignable to; the bound types below are exact
type ContextFunctions<C> = Record<string, (ctx: C, ...args: any[]) => unknown>;

export type BoundTo<C, F extends ContextFunctions<C>> = {
  [K in keyof F]: F[K] extends (ctx: C, ...args: infer A) => infer R ? (...args: A) => R : never;
};

export function bindContext<C, F extends ContextFunctions<C>>(ctx: C, fns: F): BoundTo<C, F> {
  const bound: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(fns)) bound[name] = (...args: unknown[]) => fn(ctx, ...args);
  return bound as BoundTo<C, F>;
}
