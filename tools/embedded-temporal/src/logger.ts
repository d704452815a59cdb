/**
 * The logging surface the server needs. pino's Logger satisfies it, so `npm start` can pass its
 * own; the CLI uses the small JSON-lines logger below.
 */
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** One JSON object per line on stderr (stdout stays free for the launcher's protocol, if any). */
export function consoleLogger(minLevel: 'info' | 'warn' | 'error' = 'info'): Logger {
  const order = { info: 0, warn: 1, error: 2 };
  const write = (level: 'info' | 'warn' | 'error', obj: object, msg: string): void => {
    if (order[level] < order[minLevel]) return;
    process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), msg, ...obj }) + '\n');
  };
  return {
    info: (o, m) => write('info', o, m),
    warn: (o, m) => write('warn', o, m),
    error: (o, m) => write('error', o, m),
  };
}
