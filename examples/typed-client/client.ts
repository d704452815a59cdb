/**
 * A typed pixflow client: openapi-fetch over the types openapi-typescript generated from
 * /openapi.json (./api.d.ts). Paths, parameters, bodies and answers are checked by the compiler:
 *
 *   const api = pixflowClient('http://localhost:3000', apiKey);
 *   const { data, error } = await api.POST('/v1/charges', { body: { amount: 1000, description: 'Pedido' } });
 */
import createClient from 'openapi-fetch';
import type { paths } from './api';

export type { paths, components, webhooks } from './api';

/** A client for `baseUrl`; `token` (a JWT from login or an API key) goes in every request. */
export function pixflowClient(baseUrl: string, token?: string) {
  return createClient<paths>({
    baseUrl,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

export type PixflowClient = ReturnType<typeof pixflowClient>;
