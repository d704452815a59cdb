/**
 * A payment as the acquirer's wire says it (BCB `Pix`) and as the charge workflow takes it
 * (`PaymentNotice`, integer cents). The inbox stores the wire form whatever the source (callback
 * or `GET /cob`), so a parked payment is re-driven the same way as a callback.
 */
import { centsToWire, wireToCents } from '../../acquirer/money-wire';
import type { PixWire } from '../../acquirer/wire';
import type { PixReceived } from '../../acquirer/types';
import type { PaymentNotice } from '../../../workflows/charge-types';

export function noticeOf(p: PixWire, txid: string): PaymentNotice {
  const document = p.pagador?.cpf ?? p.pagador?.cnpj;
  return {
    endToEndId: p.endToEndId,
    txid,
    // The callback schema admits only positive `\d{1,10}\.\d{2}` amounts, which always convert.
    amount: wireToCents(p.valor) ?? 0,
    paidAt: p.horario,
    payer: p.pagador && document ? { name: p.pagador.nome, document } : null,
  };
}

export function pixWireOf(n: PaymentNotice): PixWire {
  const pagador = n.payer
    ? n.payer.document.length === 11
      ? { cpf: n.payer.document, nome: n.payer.name }
      : { cnpj: n.payer.document, nome: n.payer.name }
    : undefined;
  return {
    endToEndId: n.endToEndId,
    txid: n.txid,
    valor: centsToWire(n.amount),
    horario: n.paidAt,
    ...(pagador ? { pagador } : {}),
  };
}

/** A payment the acquirer reports on a cob (`GET /cob/{txid}`), as a notice. */
export function noticeOfReceived(p: PixReceived, txid: string): PaymentNotice {
  return { endToEndId: p.endToEndId, txid, amount: p.amount, paidAt: p.paidAt, payer: p.payer ?? null };
}
