/** The syntax rule of a webhook URL: the request schema checks it; src/services/webhooks/url.ts adds the address rules. */
/** Syntax only: an absolute http(s) URL with a host. Returns the reason it is not, or null. */
export function urlSyntaxProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.hostname === '') return 'must name a host';
  return null;
}
