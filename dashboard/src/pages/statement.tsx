/** The statement (extrato) of a range of São Paulo days: opening, entries with running balances, closing, CSV. */
import { useState } from 'preact/hooks';
import { api, must } from '../api';
import { brl, dateTime, saoPauloDay, t } from '../i18n';
import { DataTable, Field, LoadState, Pager, useLoad } from '../ui';

export function Statement() {
  const today = saoPauloDay();
  const [range, setRange] = useState({ from: `${today.slice(0, 8)}01`, to: today });
  const [draft, setDraft] = useState(range);
  const [page, setPage] = useState(1);
  const loaded = useLoad(
    () =>
      must(api.GET('/v1/merchants/me/statement', { params: { query: { ...range, page: String(page), limit: '50' } } })),
    [range.from, range.to, page],
  );
  const csv = `/dashboard/api/v1/merchants/me/statement.csv?from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`;
  return (
    <section>
      <h1>{t('Extrato')}</h1>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setRange(draft);
          setPage(1);
        }}
      >
        <Field label={t('De')}>
          <input
            name="from"
            type="date"
            value={draft.from}
            onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })}
          />
        </Field>
        <Field label={t('Até')}>
          <input
            name="to"
            type="date"
            value={draft.to}
            onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })}
          />
        </Field>
        <button type="submit">{t('Mostrar')}</button>
        <a class="button" href={csv} download={`extrato-${range.from}-${range.to}.csv`}>
          {t('Baixar CSV')}
        </a>
      </form>
      <LoadState loaded={loaded}>
        {(s) => (
          <>
            <p>
              {t('Saldo inicial')}: {brl(s.opening.available)} / {brl(s.opening.pending)} / {brl(s.opening.blocked)}
            </p>
            <DataTable
              testId="statement"
              rows={s.entries}
              rowKey={(e) => e.id}
              columns={[
                { label: t('Data'), cell: (e) => dateTime(e.occurredAt) },
                { label: t('Tipo'), cell: (e) => e.type },
                { label: t('Descrição'), cell: (e) => e.description },
                { label: t('Valor'), num: true, cell: (e) => brl(e.amount) },
                { label: t('Disponível'), num: true, cell: (e) => brl(e.balanceAfter.available) },
                { label: t('A liberar'), num: true, cell: (e) => brl(e.balanceAfter.pending) },
                { label: t('Bloqueado'), num: true, cell: (e) => brl(e.balanceAfter.blocked) },
              ]}
            />
            <Pager page={s.page} limit={s.limit} total={s.total} go={setPage} />
            <p>
              {t('Saldo final')}: {brl(s.closing.available)} / {brl(s.closing.pending)} / {brl(s.closing.blocked)}
            </p>
          </>
        )}
      </LoadState>
    </section>
  );
}
