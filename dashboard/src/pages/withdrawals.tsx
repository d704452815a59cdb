/** Withdrawals: the list, and a new one to a PIX key (validated by the API, whose message is shown). */
import { useState } from 'preact/hooks';
import type { paths } from '../../../examples/typed-client/api';
import { api, idempotencyKey, must } from '../api';
import { brl, dateTime, parseCents, t } from '../i18n';
import { ActionError, DataTable, Field, LoadState, Pager, useAction, useLoad } from '../ui';

type Body = paths['/v1/merchants/me/withdrawals']['post']['requestBody']['content']['application/json'];
type KeyType = Body['pixKeyType'];
const KEY_TYPES: KeyType[] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'CHAVE_ALEATORIA'];

export function Withdrawals() {
  const [page, setPage] = useState(1);
  const list = useLoad(async () => {
    const [w, b] = await Promise.all([
      must(api.GET('/v1/merchants/me/withdrawals', { params: { query: { page: String(page), limit: '10' } } })),
      must(api.GET('/v1/merchants/me/balance')),
    ]);
    return { ...w, balance: b.balance };
  }, [page]);
  const action = useAction();
  const [form, setForm] = useState({ amount: '', pixKeyType: 'EMAIL' as KeyType, pixKey: '', description: '' });
  const [after, setAfter] = useState<number>();
  return (
    <section>
      <h1>{t('Saques')}</h1>
      <LoadState loaded={list}>
        {(d) => (
          <p>
            {t('Disponível')}: <strong data-testid="available">{brl(d.balance.available)}</strong>
          </p>
        )}
      </LoadState>
      <h2>{t('Novo saque')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const body: Body = { amount: parseCents(form.amount), pixKeyType: form.pixKeyType, pixKey: form.pixKey };
            if (form.description) body.description = form.description;
            const res = await must(
              api.POST('/v1/merchants/me/withdrawals', {
                body,
                params: { header: { 'x-idempotency-key': idempotencyKey() } },
              }),
            );
            setAfter(res.balance.available);
            list.reload();
          });
        }}
      >
        <Field label={t('Valor (R$)')} action={action} param="amount">
          <input
            name="amount"
            inputMode="decimal"
            required
            value={form.amount}
            onInput={(e) => setForm({ ...form, amount: e.currentTarget.value })}
          />
        </Field>
        <Field label={t('Tipo de chave PIX')} action={action} param="pixKeyType">
          <select
            name="pixKeyType"
            value={form.pixKeyType}
            onChange={(e) => {
              const v = e.currentTarget.value;
              setForm({ ...form, pixKeyType: KEY_TYPES.find((k) => k === v) ?? 'EMAIL' });
            }}
          >
            {KEY_TYPES.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('Chave PIX')} action={action} param="pixKey">
          <input
            name="pixKey"
            required
            value={form.pixKey}
            onInput={(e) => setForm({ ...form, pixKey: e.currentTarget.value })}
          />
        </Field>
        <Field label={t('Descrição')} action={action} param="description">
          <input
            name="description"
            value={form.description}
            onInput={(e) => setForm({ ...form, description: e.currentTarget.value })}
          />
        </Field>
        <button type="submit" disabled={action.busy}>
          {t('Sacar')}
        </button>
        <ActionError action={action} params={['amount', 'pixKeyType', 'pixKey', 'description']} />
      </form>
      {after !== undefined ? (
        <p role="status">
          {t('Saldo após o saque')}: <strong data-testid="balance-after">{brl(after)}</strong>
        </p>
      ) : null}
      <LoadState loaded={list}>
        {(d) => (
          <>
            <DataTable
              testId="withdrawals"
              rows={d.withdrawals}
              rowKey={(w) => w.id}
              columns={[
                { label: t('Criada em'), cell: (w) => dateTime(w.createdAt) },
                { label: t('Valor'), num: true, cell: (w) => brl(w.amount) },
                { label: t('Chave PIX'), cell: (w) => w.pixKey ?? '—' },
                { label: t('Status'), cell: (w) => w.status },
              ]}
            />
            <Pager page={d.page} limit={d.limit} total={d.total} go={setPage} />
          </>
        )}
      </LoadState>
    </section>
  );
}
