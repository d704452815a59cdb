/** pt-BR first, English on request; money as R$ 1.234,56 and times in America/Sao_Paulo whatever the language. */
import { signal } from './state';

export type Lang = 'pt-BR' | 'en';
export const TIME_ZONE = 'America/Sao_Paulo';

const EN: Record<string, string> = {
  Entrar: 'Sign in',
  Sair: 'Sign out',
  'E-mail': 'E-mail',
  Senha: 'Password',
  'Visão geral': 'Overview',
  Cobranças: 'Charges',
  Extrato: 'Statement',
  Saques: 'Withdrawals',
  'Chaves de API': 'API keys',
  Infrações: 'Infractions',
  Disponível: 'Available',
  'A liberar': 'Pending',
  Bloqueado: 'Blocked',
  Total: 'Total',
  'Recebido hoje': 'Paid today',
  'Recebido no mês': 'Paid this month',
  'Últimas cobranças': 'Last charges',
  'Nova cobrança': 'New charge',
  'Valor (R$)': 'Amount (R$)',
  Descrição: 'Description',
  'Validade (segundos)': 'Expiry (seconds)',
  'Cliente (opcional)': 'Customer (optional)',
  Nome: 'Name',
  Telefone: 'Phone',
  'Documento (CPF/CNPJ)': 'Document (CPF/CNPJ)',
  'Criar cobrança': 'Create charge',
  'Código copia e cola': 'Copy-and-paste code',
  Copiar: 'Copy',
  Copiado: 'Copied',
  Status: 'Status',
  Todas: 'All',
  Anterior: 'Previous',
  Próxima: 'Next',
  Página: 'Page',
  'Criada em': 'Created',
  'Paga em': 'Paid at',
  Valor: 'Amount',
  Detalhes: 'Details',
  Pagador: 'Payer',
  Tarifa: 'Fee',
  Reembolsos: 'Refunds',
  Reembolsar: 'Refund',
  Motivo: 'Reason',
  'Pagar esta cobrança (sandbox)': 'Pay this charge (sandbox)',
  'Abrir uma infração (sandbox)': 'Open an infraction (sandbox)',
  De: 'From',
  Até: 'To',
  Mostrar: 'Show',
  'Baixar CSV': 'Download CSV',
  'Saldo inicial': 'Opening balance',
  'Saldo final': 'Closing balance',
  Data: 'Date',
  Tipo: 'Type',
  'Saldo disponível após': 'Available after',
  'Novo saque': 'New withdrawal',
  'Tipo de chave PIX': 'PIX key type',
  'Chave PIX': 'PIX key',
  Sacar: 'Withdraw',
  'Saldo após o saque': 'Balance after the withdrawal',
  'Criar chave': 'Create key',
  Excluir: 'Delete',
  'Guarde este valor agora: ele não será mostrado de novo.': 'Store this value now: it will not be shown again.',
  'Valor da chave': 'Key value',
  'Último uso': 'Last used',
  nunca: 'never',
  'Carregando…': 'Loading…',
  'Nada por aqui ainda.': 'Nothing here yet.',
  'Prazo da defesa': 'Defense deadline',
  Defesa: 'Defense',
  'Arquivos (PDF, PNG, JPEG)': 'Files (PDF, PNG, JPEG)',
  'Enviar defesa': 'Submit defense',
  'Defesa enviada.': 'Defense submitted.',
  Voltar: 'Back',
  'Cancelar cobrança': 'Cancel charge',
  'Painel do lojista': 'Merchant dashboard',
  Navegação: 'Navigation',
  Idioma: 'Language',
  'Sua sessão expirou: entre de novo.': 'Your session has expired: sign in again.',
  Atualizar: 'Refresh',
  Evento: 'Event',
  Eventos: 'Events',
  Tentativas: 'Attempts',
  Reenviar: 'Redeliver',
  Desativar: 'Deactivate',
  Ativar: 'Activate',
  'Trocar o secret': 'Rotate the secret',
  Entregas: 'Deliveries',
  'Criar webhook': 'Create webhook',
  Salvar: 'Save',
  Editar: 'Edit',
  'Nenhum marcado: todos os eventos.': 'None checked: every event.',
  'Todos os eventos': 'Every event',
};

export const lang = signal<Lang>(localStorage.getItem('pixflow.lang') === 'en' ? 'en' : 'pt-BR');

export function setLang(next: Lang): void {
  localStorage.setItem('pixflow.lang', next);
  document.documentElement.lang = next;
  lang.set(next);
}

/** The text in the current language: the Portuguese text is the key. */
export const t = (pt: string): string => (lang.get() === 'en' ? (EN[pt] ?? pt) : pt);

const money = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });
/** Cents as `R$ 1.234,56` (one plain space after R$, whatever the platform puts there). */
export const brl = (cents: number): string => money.format(cents / 100).replace(/\s/g, ' ');

export const dateTime = (iso: string | null | undefined): string =>
  iso
    ? new Intl.DateTimeFormat(lang.get(), { dateStyle: 'short', timeStyle: 'short', timeZone: TIME_ZONE }).format(
        new Date(iso),
      )
    : '—';

/** Today's calendar day in São Paulo, YYYY-MM-DD (the statement's days). */
export function saoPauloDay(at = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: TIME_ZONE,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/** "1.234,56", "1234.56" or "29,9" as cents; NaN when it is not an amount (the API then says why). */
export function parseCents(text: string): number {
  const s = text.trim().replace(/^R\$\s*/, '');
  const normalised = s.includes(',') ? s.replace(/\./g, '').replace(',', '.') : s;
  if (!/^\d+(\.\d{1,2})?$/.test(normalised)) return Number.NaN;
  return Math.round(Number(normalised) * 100);
}
