/** PIX domain: documents, key formats, BR Code, QR image. Pure, except the QR worker pool (qr.ts). */
export { documentType, isValidCnpj, isValidCpf, isValidDocument, type DocumentType } from './document';
export {
  EMAIL_KEY_MAX_LENGTH,
  isPixKeyType,
  isValidCustomerPhone,
  isValidE164Phone,
  isValidEmail,
  isValidUuid,
  PIX_KEY_TYPES,
  validatePixKey,
  type PixKeyCheck,
  type PixKeyType,
} from './pix-key';
export {
  BrCodeError,
  buildBrCode,
  crc16,
  formatAmount,
  isBrCodeError,
  isValidTxid,
  MAX_AMOUNT_CENTS,
  newTxid,
  NO_TXID,
  parseAmount,
  parseBrCode,
  tryParseBrCode,
  type BrCode,
  type BrCodeErrorCode,
  type BrCodeInput,
  type BrCodeParseResult,
} from './brcode';
export { closeQrRenderer, QrRenderError, renderQrDataUrl, warmQrRenderer } from './qr';
