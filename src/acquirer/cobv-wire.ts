/**
 * A due-date charge's rules (src/domain/due-date-amount.ts) as the BCB cobv carries them
 * (`calendario`, `valor.multa/juros/abatimento/desconto`) and back: the client sends with
 * `cobvOf`, the simulator reads with `rulesOfCobv`. Percentages in hundredths travel as the
 * same decimal strings as amounts (250 → "2.50").
 */
import type { DueDateRules } from '../domain/due-date-amount';
import { centsToWire, wireToCents } from './money-wire';
import type { CobvRequest } from './types';
import type { CobvSolicitada, CobvValor } from './wire';

const FIXED = 1;
const PERCENT = 2;
/** juros modalidades: value per calendar day (1), percent per month over calendar days (3). */
const INTEREST_PER_DAY = 1;
const INTEREST_PER_MONTH = 3;

const fixedOrPercent = (r: { mode: string; amount?: number; percent?: number }) =>
  r.mode === 'FIXED'
    ? { modalidade: FIXED, valorPerc: centsToWire(r.amount ?? 0) }
    : { modalidade: PERCENT, valorPerc: centsToWire(r.percent ?? 0) };

export function cobvValorOf(amount: number, rules: DueDateRules): CobvValor {
  const { fine, interest, discount, abatement } = rules;
  return {
    original: centsToWire(amount),
    ...(fine ? { multa: fixedOrPercent(fine) } : {}),
    ...(interest
      ? {
          juros:
            interest.mode === 'AMOUNT_PER_DAY'
              ? { modalidade: INTEREST_PER_DAY, valorPerc: centsToWire(interest.amount) }
              : { modalidade: INTEREST_PER_MONTH, valorPerc: centsToWire(interest.percent) },
        }
      : {}),
    ...(abatement ? { abatimento: fixedOrPercent(abatement) } : {}),
    ...(discount
      ? {
          desconto: {
            modalidade: discount.mode === 'FIXED_UNTIL' ? FIXED : PERCENT,
            descontoDataFixa: discount.until.map((d) => ({
              data: d.date,
              valorPerc: centsToWire('amount' in d ? d.amount : d.percent),
            })),
          },
        }
      : {}),
  } as CobvValor;
}

/** The PUT /cobv/{txid} body of a request. */
export function cobvOf(req: CobvRequest): CobvSolicitada {
  const { document, name } = req.debtor;
  return {
    calendario: { dataDeVencimento: req.rules.dueDate, validadeAposVencimento: req.rules.validityAfterDue },
    devedor: document.length === 11 ? { cpf: document, nome: name } : { cnpj: document, nome: name },
    valor: cobvValorOf(req.amount, req.rules),
    chave: req.key,
    ...(req.description ? { solicitacaoPagador: req.description.slice(0, 140) } : {}),
  };
}

const cents = (v: string): number => wireToCents(v) ?? 0;
const fromFixedOrPercent = (v: { modalidade: number; valorPerc: string }) =>
  v.modalidade === FIXED
    ? { mode: 'FIXED' as const, amount: cents(v.valorPerc) }
    : { mode: 'PERCENT' as const, percent: cents(v.valorPerc) };

/** A cobv's rules as the payer's bank reads them from the payload (the simulator's side). */
export function rulesOfCobv(body: CobvSolicitada): DueDateRules {
  const { multa, juros, abatimento, desconto } = body.valor;
  const rules: DueDateRules = {
    dueDate: body.calendario.dataDeVencimento,
    validityAfterDue: body.calendario.validadeAposVencimento ?? 30,
  };
  if (multa) rules.fine = fromFixedOrPercent(multa);
  if (abatimento) rules.abatement = fromFixedOrPercent(abatimento);
  if (juros)
    rules.interest =
      juros.modalidade === INTEREST_PER_DAY
        ? { mode: 'AMOUNT_PER_DAY', amount: cents(juros.valorPerc) }
        : { mode: 'PERCENT_PER_MONTH', percent: cents(juros.valorPerc) };
  if (desconto)
    rules.discount =
      desconto.modalidade === FIXED
        ? {
            mode: 'FIXED_UNTIL',
            until: desconto.descontoDataFixa.map((d) => ({ date: d.data, amount: cents(d.valorPerc) })),
          }
        : {
            mode: 'PERCENT_UNTIL',
            until: desconto.descontoDataFixa.map((d) => ({ date: d.data, percent: cents(d.valorPerc) })),
          };
  return rules;
}
