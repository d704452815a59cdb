/**
 * The visibility RPCs' translation (README "Visibility"): list pages, counts with their
 * `GROUP BY ExecutionStatus` groups, and the search attributes GetSearchAttributes names. The
 * filter itself and the indexes are src/visibility/.
 */
import { long, temporal } from '../proto';
import type { Store } from '../store';
import { isSystemAttribute, predefinedAttributes, statusNames, type ValueType } from '../visibility/query';
import type { CountResult } from '../visibility/visibility';

import ws = temporal.api.workflowservice.v1;

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

const indexedValueTypes: Record<ValueType, temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
};

interface ListRequest {
  namespace?: string | null;
  query?: string | null;
  pageSize?: number | null;
  nextPageToken?: Uint8Array | null;
}

/**
 * One page, in keyset pages as the real server's visibility: the token names the last row
 * returned, so runs that leave the filter while a client walks the pages (each one terminated as
 * it is listed) shift nothing. Only the page's runs are woken if parked (src/dormant.ts).
 */
export function listPage(store: Store, req: ListRequest): ws.IListWorkflowExecutionsResponse {
  store.requireNamespace(req.namespace);
  const size = req.pageSize && req.pageSize > 0 ? req.pageSize : 1000;
  const page = store.visibility.list(req.namespace ?? '', req.query ?? '', size, req.nextPageToken);
  return { executions: page.rows.map((r) => store.runOf(r).info()), nextPageToken: page.nextPageToken };
}

/** A status as the real server encodes a group value: a Keyword search-attribute payload. */
function statusPayload(status: number): temporal.api.common.v1.IPayload {
  return {
    metadata: { encoding: Buffer.from('json/plain'), type: Buffer.from('Keyword') },
    data: Buffer.from(JSON.stringify(statusNames.get(status) ?? '')),
  };
}

export function countAnswer(c: CountResult): ws.ICountWorkflowExecutionsResponse {
  if (!c.groups) return { count: long(c.count) };
  return {
    count: long(c.count),
    groups: c.groups.map((g) => ({ groupValues: [statusPayload(g.status)], count: long(g.count) })),
  };
}

/** GetSearchAttributes: system, predefined and custom attributes (registered or seen in `default`). */
export function searchAttributeKeys(store: Store): Record<string, temporal.api.enums.v1.IndexedValueType> {
  const out: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const [name, type] of store.visibility.attributes('default')) out[name] = indexedValueTypes[type];
  return out;
}

/** ListSearchAttributes' custom attributes: registered (`--search-attribute`) or seen in the namespace. */
export function customSearchAttributes(
  store: Store,
  namespace: string,
): Record<string, temporal.api.enums.v1.IndexedValueType> {
  const out: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const [name, type] of store.visibility.attributes(namespace)) {
    if (!isSystemAttribute(name) && !predefinedAttributes.has(name)) out[name] = indexedValueTypes[type];
  }
  return out;
}
