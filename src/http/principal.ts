/** Reading the caller from a context once a guard has run. */
import { notFound, unauthenticated } from '../lib/errors';
import type { AppContext, Principal } from './types';

export function principalOf(ctx: AppContext): Principal {
  const p = ctx.state.principal;
  // Only reachable if a route forgot its guard: fail closed.
  if (!p) throw unauthenticated();
  return p;
}

/**
 * The merchant every query of a merchant route is scoped to. An operator's JWT has no merchant;
 * on merchant routes that reads as "merchant not found" (the 404 of docs/api.md "Errors"), not as a leak of data.
 */
export function merchantIdOf(ctx: AppContext): string {
  const { merchantId } = principalOf(ctx);
  if (!merchantId) throw notFound('Merchant not found');
  return merchantId;
}
