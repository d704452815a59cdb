// The refund-id mapping is the acquirer's wire rule (src/acquirer/wire.ts), below both the charges
// and the inbox that use it, so that neither folder imports the other back.
export { acquirerRefundId, internalRefundId } from '../../acquirer/wire';
