/**
 * The one way the API side starts and signals a workflow, parametrised by the workflow's kind
 * (docs/architecture.md "Layers": Temporal clients). Every run is named by its business id, so a
 * start of an id that already runs is success (docs/architecture.md "Architecture": workflow ids);
 * it carries the merchant and the entity as memo and, unless turned off
 * (TEMPORAL_SEARCH_ATTRIBUTES=false), as the Keyword search attributes MerchantId and EntityId, so
 * operators filter money movements by merchant. A failed start or signal-with-start counts in the
 * workflow start failure metric.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { defineSearchAttributeKey, type SearchAttributePair } from '@temporalio/common';
import type * as workflows from '../../../workflows';
import { recordWorkflowStartFailure } from '../../observability/metrics';
import { ENTITY_ID_ATTRIBUTE_NAME, MERCHANT_ID_ATTRIBUTE_NAME } from '../search-attribute-names';

export const MERCHANT_ID_ATTRIBUTE = defineSearchAttributeKey(MERCHANT_ID_ATTRIBUTE_NAME, 'KEYWORD');
export const ENTITY_ID_ATTRIBUTE = defineSearchAttributeKey(ENTITY_ID_ATTRIBUTE_NAME, 'KEYWORD');

/** What names and tags one kind of workflow run, from the reference the caller holds. */
export interface WorkflowKindSpec<Ref, Input> {
  /** The workflow function's name (a key of workflows/index.ts). */
  type: keyof typeof workflows;
  workflowId(ref: Ref): string;
  /** The run's only argument. */
  input(ref: Ref): Input;
  /** The memo; it always has the merchant, and the entity's id under its own name. */
  memo(ref: Ref): Record<string, string>;
  merchantId(ref: Ref): string;
  entityId(ref: Ref): string;
}

export interface WorkflowStarter<Ref> {
  /** Starts the run; resolves false when one with that id was already running. */
  start(ref: Ref, opts?: { startDelayMs?: number }): Promise<boolean>;
  /** Signal-with-start: reaches the running run, or starts a fresh one that picks up from the database. */
  signal(ref: Ref, name: string, args: unknown[]): Promise<void>;
}

export function workflowStarter<Ref, Input>(
  client: Client,
  taskQueue: string,
  opts: { searchAttributes?: boolean },
  kind: WorkflowKindSpec<Ref, Input>,
): WorkflowStarter<Ref> {
  const base = (ref: Ref) => {
    const typedSearchAttributes: SearchAttributePair[] = [
      { key: MERCHANT_ID_ATTRIBUTE, value: kind.merchantId(ref) },
      { key: ENTITY_ID_ATTRIBUTE, value: kind.entityId(ref) },
    ];
    return {
      taskQueue,
      workflowId: kind.workflowId(ref),
      args: [kind.input(ref)] as [Input],
      memo: kind.memo(ref),
      ...(opts.searchAttributes === false ? {} : { typedSearchAttributes }),
    };
  };
  return {
    async start(ref, startOpts) {
      const delay = startOpts?.startDelayMs ?? 0;
      try {
        await client.workflow.start(kind.type, { ...base(ref), ...(delay > 0 ? { startDelay: delay } : {}) });
        return true;
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
        recordWorkflowStartFailure(kind.type);
        throw err;
      }
    },
    async signal(ref, name, args) {
      try {
        await client.workflow.signalWithStart(kind.type, { ...base(ref), signal: name, signalArgs: args });
      } catch (err) {
        recordWorkflowStartFailure(kind.type);
        throw err;
      }
    },
  };
}
