/**
 * At most `limit` tasks run at once; up to `maxQueued` more wait their turn; beyond that a task is
 * refused at once with QueueFullError. Used to bound CPU- and memory-heavy work (password hashing)
 * that a flood of requests could otherwise pile up without limit.
 */
export class QueueFullError extends Error {
  constructor() {
    super('Too many tasks waiting');
    this.name = 'QueueFullError';
  }
}

export class BoundedConcurrency {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly maxQueued: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.maxQueued) throw new QueueFullError();
      // The finishing task hands its slot over directly, so `running` never drops below the limit
      // while others wait.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
