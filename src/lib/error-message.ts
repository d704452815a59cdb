/** What was thrown, as one line of text: an Error's message, anything else stringified. Imports nothing, so every layer may use it. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
