import { runTeardowns } from './lifecycle';

// Mocha root hook plugin: runs once after every suite of the run.
export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await runTeardowns();
  },
};
