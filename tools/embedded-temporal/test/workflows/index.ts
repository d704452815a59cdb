/** Workflows used by the conformance suite (bundled once per run through src/testing.ts). */
export * from './basic';
export * from './activities';
export * from './messages';
export * from './lifecycle';
export * from './features';
export * from './reminder';
export * from './updates';
export * from './durable';
