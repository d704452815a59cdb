import { redirect } from '@sveltejs/kit';
import { routeForWorkflows } from '@temporalio/ui/utilities/route-for';

export function load({ params }) {
  redirect(302, routeForWorkflows({ namespace: params.namespace }));
}
