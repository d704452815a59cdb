/** Request schemas for login and API keys (docs/api.md "Authentication"). */
import { z } from 'zod';
import { text } from './validation';
import { isoTime } from './common';

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

// ---- responses ----------------------------------------------------------------------------

export const loginResponse = z.object({
  token: z.string().describe('JWT (HS256)'),
  user: z.object({ id: z.string(), email: z.string(), role: z.enum(['USER', 'ADMIN']) }),
});

const apiKeyFields = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.literal('ACTIVE'),
  createdAt: isoTime,
};
export const apiKeyCreatedView = z.object({
  ...apiKeyFields,
  value: z.string().describe('pixflow_…, shown only here'),
});
export const apiKeyListItem = z.object({
  ...apiKeyFields,
  value: z.string().describe('Masked'),
  lastUsedAt: isoTime.nullable(),
});
export const apiKeyCreatedResponse = z.object({ apiKey: apiKeyCreatedView });
export const apiKeyListResponse = z.object({ apiKeys: z.array(apiKeyListItem) });
