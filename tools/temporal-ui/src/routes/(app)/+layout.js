// What every page needs first: the server's settings, cluster and system info; the namespace list
// loads in the background. There is no login: the embedded server runs without auth.
import { fetchCluster, fetchSystemInfo } from '@temporalio/ui/services/cluster-service';
import { fetchNamespaces } from '@temporalio/ui/services/namespaces-service';
import { fetchSettings } from '@temporalio/ui/services/settings-service';
import '../../app.css';

export async function load({ fetch }) {
  const settings = await fetchSettings(fetch);
  fetchNamespaces(settings, fetch);
  const [cluster, systemInfo] = await Promise.all([fetchCluster(settings, fetch), fetchSystemInfo(settings, fetch)]);
  return { settings, cluster, systemInfo };
}
