/** Every workflow the pixflow worker runs. Deterministic code only: see DESIGN §2. */
export { chargeWorkflow } from './charge';
export { infractionWorkflow } from './infraction';
export { pixKeyRegistrationWorkflow } from './pix-key';
