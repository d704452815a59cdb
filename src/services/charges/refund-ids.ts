/**
 * Our refund ids are `rf_<ULID>`; a devolução id at the acquirer must be `[a-zA-Z0-9]{1,35}` (BCB),
 * so there it is `rf<ULID>`. The two mappings live together so they stay each other's inverse.
 */
export const acquirerRefundId = (refundId: string): string => refundId.replace(/[^a-zA-Z0-9]/g, '');

export const internalRefundId = (acquirerId: string): string => `rf_${acquirerId.replace(/^rf/, '')}`;
