/** Charges: the list with its status filter and pages, a new charge with its QR Code, and a charge's detail. */
import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../../examples/typed-client/api';
import { api, idempotencyKey, must } from '../api';
import { brl, dateTime, parseCents, t } from '../i18n';
import { ActionError, CopyButton, DataTable, Field, LoadState, Pager, useAction, useLoad } from '../ui';

type ChargeStatus = NonNullable<NonNullable<paths['/v1/charges']['get']['parameters']['query']>['status']>;
type ListedCharge = {
  id: string;
  amount: number;
  description: string;
  status: ChargeStatus;
  createdAt: string;
  paidAt: string | null;
};
type NewChargeBody = paths['/v1/charges']['post']['requestBody']['content']['application/json'];
type CreatedCharge = paths['/v1/charges']['post']['responses'][201]['content']['application/json']['charge'];

const STATUSES: ChargeStatus[] = ['PENDING', 'PAID', 'FAILED', 'CANCELED', 'REFUNDED'];
const POLL_MS = 2000;

export function ChargeTable({ charges }: { charges: ListedCharge[] }) {
  return (
    <DataTable
      testId="charges"
      rows={charges}
      rowKey={(c) => c.id}
      columns={[
        { label: t('Criada em'), cell: (c) => dateTime(c.createdAt) },
        { label: t('Descrição'), cell: (c) => <a href={`#/charges/${c.id}`}>{c.description}</a> },
        { label: t('Valor'), num: true, cell: (c) => brl(c.amount) },
        { label: t('Status'), cell: (c) => c.status },
      ]}
    />
  );
}

/** The charge's status, asked again every two seconds while it is PENDING. */
function useLiveStatus(id: string, initial: ChargeStatus): ChargeStatus {
  const [status, setStatus] = useState(initial);
  useEffect(() => {
    if (status !== 'PENDING') return undefined;
    const timer = setInterval(() => {
      api.GET('/v1/charges/{id}', { params: { path: { id } } }).then(
        ({ data }) => {
          if (data) setStatus(data.charge.status);
        },
        () => undefined,
      );
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [id, status]);
  return status;
}

function SandboxPay({ id }: { id: string }) {
  const action = useAction();
  const [sent, setSent] = useState(false);
  return (
    <div class="sandbox">
      <button
        type="button"
        disabled={action.busy || sent}
        onClick={() =>
          void action.run(async () => {
            await must(api.POST('/v1/sandbox/charges/{id}/pay', { params: { path: { id } }, body: {} }));
            setSent(true);
          })
        }
      >
        {t('Pagar esta cobrança (sandbox)')}
      </button>
      <ActionError action={action} />
    </div>
  );
}

function QrCode({ charge, sandbox }: { charge: CreatedCharge; sandbox: boolean }) {
  const status = useLiveStatus(charge.id, charge.status);
  return (
    <div class="qr" data-testid="new-charge">
      <img src={charge.imageBase64} alt={`QR Code PIX ${brl(charge.amount)}`} width={240} height={240} />
      <Field label={t('Código copia e cola')}>
        <textarea readonly rows={4} data-testid="brcode" value={charge.qrCode} />
      </Field>
      <CopyButton text={charge.qrCode} />
      <p>
        {t('Status')}: <strong data-testid="charge-status">{status}</strong>
      </p>
      {sandbox && status === 'PENDING' ? <SandboxPay id={charge.id} /> : null}
      <p>
        <a href={`#/charges/${charge.id}`}>{t('Detalhes')}</a>
      </p>
    </div>
  );
}

function NewCharge({ sandbox, created }: { sandbox: boolean; created: () => void }) {
  const action = useAction();
  const [charge, setCharge] = useState<CreatedCharge>();
  const [form, setForm] = useState({
    amount: '',
    description: '',
    expiresIn: '',
    name: '',
    email: '',
    phone: '',
    document: '',
  });
  const set = (k: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value });
  const submit = () =>
    action.run(async () => {
      const body: NewChargeBody = { amount: parseCents(form.amount), description: form.description };
      if (form.expiresIn) body.expiresIn = Number(form.expiresIn);
      if (form.name || form.email || form.phone || form.document)
        body.customer = { name: form.name, email: form.email, phone: form.phone, document: form.document };
      const res = await must(
        api.POST('/v1/charges', { body, params: { header: { 'x-idempotency-key': idempotencyKey() } } }),
      );
      if ('imageBase64' in res.charge) setCharge(res.charge as CreatedCharge);
      created();
    });
  return (
    <section aria-labelledby="new-charge">
      <h2 id="new-charge">{t('Nova cobrança')}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label={t('Valor (R$)')} action={action} param="amount">
          <input name="amount" inputMode="decimal" required value={form.amount} onInput={set('amount')} />
        </Field>
        <Field label={t('Descrição')} action={action} param="description">
          <input name="description" required value={form.description} onInput={set('description')} />
        </Field>
        <Field label={t('Validade (segundos)')} action={action} param="expiresIn">
          <input name="expiresIn" inputMode="numeric" value={form.expiresIn} onInput={set('expiresIn')} />
        </Field>
        <fieldset>
          <legend>{t('Cliente (opcional)')}</legend>
          <Field label={t('Nome')} action={action} param="customer.name">
            <input name="customer.name" value={form.name} onInput={set('name')} />
          </Field>
          <Field label={t('E-mail')} action={action} param="customer.email">
            <input name="customer.email" type="email" value={form.email} onInput={set('email')} />
          </Field>
          <Field label={t('Telefone')} action={action} param="customer.phone">
            <input name="customer.phone" value={form.phone} onInput={set('phone')} />
          </Field>
          <Field label={t('Documento (CPF/CNPJ)')} action={action} param="customer.document">
            <input name="customer.document" value={form.document} onInput={set('document')} />
          </Field>
        </fieldset>
        <button type="submit" disabled={action.busy}>
          {t('Criar cobrança')}
        </button>
        <ActionError
          action={action}
          params={[
            'amount',
            'description',
            'expiresIn',
            'customer.name',
            'customer.email',
            'customer.phone',
            'customer.document',
          ]}
        />
      </form>
      {charge ? <QrCode key={charge.id} charge={charge} sandbox={sandbox} /> : null}
    </section>
  );
}

export function Charges({ sandbox }: { sandbox: boolean }) {
  const [status, setStatus] = useState<ChargeStatus | ''>('');
  const [page, setPage] = useState(1);
  const list = useLoad(
    () =>
      must(
        api.GET('/v1/charges', {
          params: { query: { page: String(page), limit: '10', ...(status ? { status } : {}) } },
        }),
      ),
    [status, page],
  );
  return (
    <>
      <h1>{t('Cobranças')}</h1>
      <NewCharge sandbox={sandbox} created={list.reload} />
      <section aria-label={t('Cobranças')}>
        <label class="field inline">
          <span>{t('Status')}</span>
          <select
            name="status"
            value={status}
            onChange={(e) => {
              const v = e.currentTarget.value;
              setStatus(STATUSES.find((s) => s === v) ?? '');
              setPage(1);
            }}
          >
            <option value="">{t('Todas')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <LoadState loaded={list}>
          {(d) => (
            <>
              <ChargeTable charges={d.charges} />
              <Pager page={d.page} limit={d.limit} total={d.total} go={setPage} />
            </>
          )}
        </LoadState>
      </section>
    </>
  );
}

export function ChargeDetail({ id, sandbox }: { id: string; sandbox: boolean }) {
  const loaded = useLoad(async () => {
    const charge = await must(api.GET('/v1/charges/{id}', { params: { path: { id } } }));
    return { charge: charge.charge };
  }, [id]);
  const refund = useAction();
  const cancel = useAction();
  const infraction = useAction();
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  return (
    <section>
      <p>
        <a href="#/charges">{t('Voltar')}</a>
      </p>
      <LoadState loaded={loaded}>
        {({ charge: c }) => (
          <>
            <h1>{c.description}</h1>
            <dl class="facts">
              <dt>{t('Valor')}</dt>
              <dd>{brl(c.amount)}</dd>
              <dt>{t('Status')}</dt>
              <dd data-testid="detail-status">{c.status}</dd>
              <dt>{t('Tarifa')}</dt>
              <dd data-testid="detail-fee">{c.fee === null ? '—' : brl(c.fee)}</dd>
              <dt>{t('Criada em')}</dt>
              <dd>{dateTime(c.createdAt)}</dd>
              <dt>{t('Paga em')}</dt>
              <dd>{dateTime(c.paidAt)}</dd>
              <dt>{t('Pagador')}</dt>
              <dd data-testid="detail-payer">{c.payer ? `${c.payer.name} (${c.payer.document})` : '—'}</dd>
              <dt>{t('Cliente (opcional)')}</dt>
              <dd>{c.customer ? `${c.customer.name} (${c.customer.document})` : '—'}</dd>
            </dl>
            <h2>{t('Reembolsos')}</h2>
            {c.refunds.length === 0 ? (
              <p>{t('Nada por aqui ainda.')}</p>
            ) : (
              <ul>
                {c.refunds.map((r) => (
                  <li key={r.id}>
                    {brl(r.amount)} — {r.status} — {dateTime(r.createdAt)} {r.reason ? `— ${r.reason}` : ''}
                  </li>
                ))}
              </ul>
            )}
            {c.status === 'PAID' ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void refund.run(async () => {
                    await must(
                      api.POST('/v1/charges/{id}/refund', {
                        params: { path: { id }, header: { 'x-idempotency-key': idempotencyKey() } },
                        body: { ...(amount ? { amount: parseCents(amount) } : {}), ...(reason ? { reason } : {}) },
                      }),
                    );
                    loaded.reload();
                  });
                }}
              >
                <Field label={t('Valor (R$)')} action={refund} param="amount">
                  <input
                    name="refund.amount"
                    inputMode="decimal"
                    value={amount}
                    onInput={(e) => setAmount(e.currentTarget.value)}
                  />
                </Field>
                <Field label={t('Motivo')} action={refund} param="reason">
                  <input name="refund.reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
                </Field>
                <button type="submit" disabled={refund.busy}>
                  {t('Reembolsar')}
                </button>
                <ActionError action={refund} params={['amount', 'reason']} />
              </form>
            ) : null}
            {c.status === 'PENDING' ? (
              <div>
                <button
                  type="button"
                  onClick={() =>
                    void cancel.run(async () => {
                      await must(api.POST('/v1/charges/{id}/cancel', { params: { path: { id } } }));
                      loaded.reload();
                    })
                  }
                >
                  {t('Cancelar cobrança')}
                </button>
                <ActionError action={cancel} />
              </div>
            ) : null}
            {sandbox && c.status === 'PENDING' ? <SandboxPay id={id} /> : null}
            {sandbox && c.status === 'PAID' ? (
              <div class="sandbox">
                <button
                  type="button"
                  onClick={() =>
                    void infraction.run(async () => {
                      const res = await must(api.POST('/v1/sandbox/infractions', { body: { chargeId: id } }));
                      location.hash = `#/infractions/${res.infraction.id}`;
                    })
                  }
                >
                  {t('Abrir uma infração (sandbox)')}
                </button>
                <ActionError action={infraction} />
              </div>
            ) : null}
          </>
        )}
      </LoadState>
    </section>
  );
}
