/**
 * temporal.api.operatorservice.v1.OperatorService: only what the UI reads, the search attribute
 * list (README "HTTP API"). Other methods answer UNIMPLEMENTED (see grpc.ts).
 */
import { temporal } from '../proto';
import type { Store } from '../store';
import { handler, type Handler } from './grpc';
import { customSearchAttributes } from './visibility-service';

import os = temporal.api.operatorservice.v1;

const T = temporal.api.enums.v1.IndexedValueType;

/** The real server's system search attributes (those a list query may name), with their types. */
const SYSTEM_ATTRIBUTES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  WorkflowId: T.INDEXED_VALUE_TYPE_KEYWORD,
  RunId: T.INDEXED_VALUE_TYPE_KEYWORD,
  WorkflowType: T.INDEXED_VALUE_TYPE_KEYWORD,
  TaskQueue: T.INDEXED_VALUE_TYPE_KEYWORD,
  ExecutionStatus: T.INDEXED_VALUE_TYPE_KEYWORD,
  StartTime: T.INDEXED_VALUE_TYPE_DATETIME,
  CloseTime: T.INDEXED_VALUE_TYPE_DATETIME,
  ExecutionTime: T.INDEXED_VALUE_TYPE_DATETIME,
  ExecutionDuration: T.INDEXED_VALUE_TYPE_INT,
  HistoryLength: T.INDEXED_VALUE_TYPE_INT,
  HistorySizeBytes: T.INDEXED_VALUE_TYPE_INT,
  StateTransitionCount: T.INDEXED_VALUE_TYPE_INT,
  ParentWorkflowId: T.INDEXED_VALUE_TYPE_KEYWORD,
  ParentRunId: T.INDEXED_VALUE_TYPE_KEYWORD,
  RootWorkflowId: T.INDEXED_VALUE_TYPE_KEYWORD,
  RootRunId: T.INDEXED_VALUE_TYPE_KEYWORD,
  TemporalChangeVersion: T.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  BuildIds: T.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  BatcherUser: T.INDEXED_VALUE_TYPE_KEYWORD,
  TemporalScheduledStartTime: T.INDEXED_VALUE_TYPE_DATETIME,
  TemporalScheduledById: T.INDEXED_VALUE_TYPE_KEYWORD,
  TemporalSchedulePaused: T.INDEXED_VALUE_TYPE_BOOL,
  TemporalNamespaceDivision: T.INDEXED_VALUE_TYPE_KEYWORD,
};

export function operatorService(store: Store): Record<string, Handler> {
  return {
    ListSearchAttributes: handler<os.IListSearchAttributesRequest>((req) => {
      store.requireNamespace(req.namespace);
      // The UI types its filter fields by this list, so MerchantId must be here as a Keyword.
      const customAttributes = customSearchAttributes(store, req.namespace ?? '');
      return { customAttributes, systemAttributes: SYSTEM_ATTRIBUTES, storageSchema: {} };
    }),
  };
}
