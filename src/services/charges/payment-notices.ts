// A payment's wire form and its notice map in src/acquirer/wire.ts, below both the charges and the
// inbox that use them, so that neither folder imports the other back.
export { noticeOf, noticeOfReceived, pixWireOf } from '../../acquirer/wire';
