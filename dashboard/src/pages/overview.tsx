/** Balances, today's and the month's paid totals, and the last charges. */
import { api, must } from '../api';
import { brl, dateTime, saoPauloDay, t } from '../i18n';
import { LoadState, useLoad } from '../ui';
import { ChargeTable } from './charges';

/** The sum of the CHARGE_PAID entries of the statement from `from` to today (every page). */
async function paidSince(from: string): Promise<number> {
  let total = 0;
  for (let page = 1; page <= 50; page++) {
    const s = await must(
      api.GET('/v1/merchants/me/statement', {
        params: { query: { from, to: saoPauloDay(), page: String(page), limit: '100' } },
      }),
    );
    total += s.entries.filter((e) => e.type === 'CHARGE_PAID').reduce((sum, e) => sum + e.amount, 0);
    if (page * s.limit >= s.total) break;
  }
  return total;
}

export function Overview() {
  const loaded = useLoad(async () => {
    const today = saoPauloDay();
    const [balance, charges, paidToday, paidMonth] = await Promise.all([
      must(api.GET('/v1/merchants/me/balance')),
      must(api.GET('/v1/charges', { params: { query: { limit: '5' } } })),
      paidSince(today),
      paidSince(`${today.slice(0, 8)}01`),
    ]);
    return { balance: balance.balance, charges: charges.charges, paidToday, paidMonth };
  }, []);
  return (
    <section>
      <h1>{t('Visão geral')}</h1>
      <LoadState loaded={loaded}>
        {(d) => (
          <>
            <dl class="cards" data-testid="balance">
              <div>
                <dt>{t('Disponível')}</dt>
                <dd data-testid="available">{brl(d.balance.available)}</dd>
              </div>
              <div>
                <dt>{t('A liberar')}</dt>
                <dd data-testid="pending">{brl(d.balance.pending)}</dd>
              </div>
              <div>
                <dt>{t('Bloqueado')}</dt>
                <dd data-testid="blocked">{brl(d.balance.blocked)}</dd>
              </div>
              <div>
                <dt>{t('Recebido hoje')}</dt>
                <dd>{brl(d.paidToday)}</dd>
              </div>
              <div>
                <dt>{t('Recebido no mês')}</dt>
                <dd>{brl(d.paidMonth)}</dd>
              </div>
            </dl>
            <h2>{t('Últimas cobranças')}</h2>
            <ChargeTable charges={d.charges} />
            <p class="muted">{dateTime(new Date().toISOString())}</p>
          </>
        )}
      </LoadState>
    </section>
  );
}
