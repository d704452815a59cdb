/** Request schemas for login and API keys (docs/api.md "Authentication"). */
import { z } from 'zod';
import { text } from './validation';

export const loginBody = z.object({
  email: text({ min: 1, max: 254 }),
  password: text({ min: 1, max: 1024 }),
});
export type LoginBody = z.infer<typeof loginBody>;

export const createApiKeyBody = z.object({
  name: text({ min: 1, max: 100 }),
  description: text({ max: 500 }).optional(),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;
