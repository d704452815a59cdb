/**
 * The custom search attributes every pixflow workflow carries (Keyword): the merchant and the
 * business id (charge, withdrawal, infraction…). Names only, so `npm start`'s dev server
 * (src/temporal/local-server.ts) registers them without loading the Temporal client.
 */
export const MERCHANT_ID_ATTRIBUTE_NAME = 'MerchantId';
export const ENTITY_ID_ATTRIBUTE_NAME = 'EntityId';
