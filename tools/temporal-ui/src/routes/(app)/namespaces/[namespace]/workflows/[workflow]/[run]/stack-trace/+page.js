import { redirect } from '@sveltejs/kit';
import { routeForCallStack } from '@temporalio/ui/utilities/route-for';

// The older name of the call-stack tab.
export function load({ params }) {
  redirect(302, routeForCallStack(params));
}
