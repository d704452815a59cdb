/** Every workflow the pixflow worker runs. Deterministic code only: see docs/architecture.md "Layers". */
export { chargeWorkflow } from './charge';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { withdrawalWorkflow } from './withdrawal';
export { infractionWorkflow } from './infraction';
export { pixKeyRegistrationWorkflow } from './pix-key';
export { subscriptionWorkflow } from './subscription';
