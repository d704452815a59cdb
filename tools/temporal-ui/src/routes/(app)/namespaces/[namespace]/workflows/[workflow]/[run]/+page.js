import { redirect } from '@sveltejs/kit';

// A run opens on its event history.
export function load({ url }) {
  redirect(302, `${url.pathname}/history`);
}
