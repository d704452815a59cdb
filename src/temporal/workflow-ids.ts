/**
 * Workflow ids derive from business ids so every start is idempotent and operators can find a
 * money movement in the Temporal UI by the id the merchant sees (docs/architecture.md "Architecture").
 */
export const chargeWorkflowId = (chargeId: string): string => `charge-${chargeId}`;
export const withdrawalWorkflowId = (withdrawalId: string): string => `withdrawal-${withdrawalId}`;
export const webhookDeliveryWorkflowId = (deliveryId: string): string => `webhook-delivery-${deliveryId}`;
export const infractionWorkflowId = (infractionId: string): string => `infraction-${infractionId}`;
export const pixKeyWorkflowId = (pixKeyId: string): string => `pixkey-${pixKeyId}`;
export const subscriptionWorkflowId = (subscriptionId: string): string => `subscription-${subscriptionId}`;
