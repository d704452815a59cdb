/** The slice of a pino logger the simulator uses, so `npm start` can hand it the service's. */
export interface SimulatorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const silentLogger: SimulatorLogger = { info: () => undefined, warn: () => undefined };
