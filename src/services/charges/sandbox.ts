/**
 * Sandbox (docs/api.md "Sandbox"; only while the acquirer is the embedded simulator): the merchant
 * asks the simulator to pay one of its own charges, and the payment then comes back through the
 * real path — signed callback, inbox, signal-with-start, the workflow's activities.
 *
 * A charge that is no longer PENDING can still be paid here on purpose: that is how a merchant sees
 * the automatic refund of a late payment.
 */
import { invalid } from '../../lib/errors';
import { isSimulatorRefusal, type SandboxControl } from '../../acquirer/sandbox-control';
import type { Party } from '../../acquirer/types';
import type { ChargesService } from './charges';

export function createChargeSandbox(deps: { charges: ChargesService; simulator: SandboxControl }) {
  async function pay(
    merchantId: string,
    chargeId: string,
    payer?: Party,
    paidOn?: string,
  ): Promise<{ endToEndId: string }> {
    // Scoped to the caller: another merchant's charge is 404 here as everywhere.
    const charge = await deps.charges.get(merchantId, chargeId);
    if (!charge.txid || !charge.qrCode) throw invalid('This charge has no cob at the acquirer (it FAILED at creation)');
    try {
      return await deps.simulator.payCob(charge.txid, { payer, paidOn });
    } catch (err) {
      if (isSimulatorRefusal(err)) throw invalid(`The sandbox acquirer cannot pay this charge: ${err.message}`);
      throw err;
    }
  }
  return { pay };
}

export type ChargeSandbox = ReturnType<typeof createChargeSandbox>;
