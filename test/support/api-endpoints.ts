/** Every endpoint the API contract (docs/api.md) names, as OpenAPI paths: the docs tests look for each. */
export const API_ENDPOINTS: Array<[method: string, path: string]> = [
  ['post', '/v1/auth/login'],
  ['post', '/v1/api-keys'],
  ['delete', '/v1/api-keys/{id}'],
  ['post', '/v1/charges'],
  ['get', '/v1/charges'],
  ['post', '/v1/merchants/me/withdrawals'],
  ['get', '/v1/merchants/me/withdrawals'],
  ['post', '/v1/webhooks/merchant'],
  ['get', '/v1/webhooks/merchant'],
  ['patch', '/v1/webhooks/merchant/{id}'],
  ['delete', '/v1/webhooks/merchant/{id}'],
  ['get', '/v1/webhooks/merchant/events'],
];
