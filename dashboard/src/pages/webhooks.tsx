/** Webhooks: create, edit (URL, name, events), activate/deactivate, rotate the secret (shown once), delete, deliveries. */
import { useState } from 'preact/hooks';
import type { paths } from '../../../examples/typed-client/api';
import { api, must } from '../api';
import { dateTime, t } from '../i18n';
import { ActionError, DataTable, FieldError, LoadState, ShownOnce, TextField, useAction, useLoad } from '../ui';

type CatalogueEntry =
  paths['/v1/webhooks/merchant/events']['get']['responses'][200]['content']['application/json']['events'][number];
type EventName = CatalogueEntry['event'];
type Webhook =
  paths['/v1/webhooks/merchant']['get']['responses'][200]['content']['application/json']['webhooks'][number];
type Draft = { url: string; name: string; events: EventName[] };

function Deliveries({ webhook }: { webhook: Webhook }) {
  const list = useLoad(
    () =>
      must(
        api.GET('/v1/webhooks/merchant/{id}/deliveries', {
          params: { path: { id: webhook.id }, query: { limit: '20' } },
        }),
      ),
    [webhook.id],
  );
  const redeliver = useAction();
  const resend = (deliveryId: string) =>
    redeliver.run(async () => {
      await must(
        api.POST('/v1/webhooks/merchant/{id}/deliveries/{deliveryId}/redeliver', {
          params: { path: { id: webhook.id, deliveryId } },
        }),
      );
      list.reload();
    });
  return (
    <div>
      <button type="button" onClick={list.reload}>
        {t('Atualizar')}
      </button>
      <LoadState loaded={list}>
        {(d) => (
          <DataTable
            testId="deliveries"
            rows={d.deliveries}
            rowKey={(x) => x.id}
            columns={[
              { label: t('Data'), cell: (x) => dateTime(x.createdAt) },
              { label: t('Evento'), cell: (x) => x.event },
              { label: t('Status'), cell: (x) => x.status },
              { label: 'HTTP', testId: 'delivery-code', cell: (x) => x.lastStatusCode ?? '—' },
              { label: t('Tentativas'), cell: (x) => x.attempts },
              {
                label: t('Reenviar'),
                hidden: true,
                cell: (x) => (
                  <button type="button" onClick={() => void resend(x.id)}>
                    {t('Reenviar')}
                  </button>
                ),
              },
            ]}
          />
        )}
      </LoadState>
      <ActionError action={redeliver} />
    </div>
  );
}

/**
 * A new webhook's fields and an edit's: URL, name, and the events picked from the catalogue (none
 * picked: every event). Edit fields are named `edit.…` so both forms can be on the page at once.
 */
function WebhookForm(props: {
  catalogue: CatalogueEntry[];
  initial: Draft;
  edit?: boolean;
  submitLabel: string;
  save: (draft: Draft) => Promise<void>;
}) {
  const action = useAction();
  const [draft, setDraft] = useState(props.initial);
  const name = (field: string) => (props.edit ? `edit.${field}` : field);
  const toggle = (event: EventName, on: boolean) =>
    setDraft({
      ...draft,
      // In the catalogue's order, whatever the order of the clicks.
      events: props.catalogue.map((c) => c.event).filter((e) => (e === event ? on : draft.events.includes(e))),
    });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(() => props.save(draft));
      }}
    >
      <TextField
        label="URL"
        name={name('url')}
        param="url"
        type="url"
        required
        value={draft.url}
        set={(url) => setDraft({ ...draft, url })}
        action={action}
      />
      <TextField
        label={t('Nome')}
        name={name('name')}
        param="name"
        value={draft.name}
        set={(value) => setDraft({ ...draft, name: value })}
        action={action}
      />
      <fieldset>
        <legend>{t('Eventos')}</legend>
        <p class="muted">{t('Nenhum marcado: todos os eventos.')}</p>
        {props.catalogue.map((ev) => (
          <label key={ev.event} class="check">
            <input
              type="checkbox"
              name={name('events')}
              value={ev.event}
              checked={draft.events.includes(ev.event)}
              onChange={(e) => toggle(ev.event, e.currentTarget.checked)}
            />
            <code>{ev.event}</code> — {ev.category}: {ev.description}
          </label>
        ))}
        <FieldError action={action} param="events" />
      </fieldset>
      <button type="submit" disabled={action.busy}>
        {props.submitLabel}
      </button>
      <ActionError action={action} params={['url', 'name', 'events']} />
    </form>
  );
}

const sameEvents = (a: EventName[], b: EventName[]): boolean => a.length === b.length && a.every((e) => b.includes(e));

/** Only the fields that changed (the PATCH leaves the others as they are); `name: null` removes it. */
function changes(webhook: Webhook, d: Draft) {
  return {
    ...(d.url !== webhook.url ? { url: d.url } : {}),
    ...(d.name !== (webhook.name ?? '') ? { name: d.name || null } : {}),
    ...(sameEvents(d.events, webhook.events) ? {} : { events: d.events }),
  };
}

function WebhookRow(props: { webhook: Webhook; catalogue: CatalogueEntry[]; changed: () => void }) {
  const { webhook, changed } = props;
  const action = useAction();
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string>();
  const [open, setOpen] = useState(false);
  const id = webhook.id;
  return (
    <li class="card" data-webhook-id={id}>
      <p>
        <strong>{webhook.name ?? webhook.url}</strong> — <code>{webhook.url}</code> — {webhook.status}
      </p>
      <p class="muted" data-testid="webhook-events">
        {webhook.events.length ? webhook.events.join(', ') : t('Todos os eventos')}
      </p>
      <div class="row">
        <button
          type="button"
          onClick={() =>
            void action.run(async () => {
              const status = webhook.status === 'ACTIVE' ? 'INACTIVE' : 'ACTIVE';
              await must(api.PATCH('/v1/webhooks/merchant/{id}', { params: { path: { id } }, body: { status } }));
              changed();
            })
          }
        >
          {webhook.status === 'ACTIVE' ? t('Desativar') : t('Ativar')}
        </button>
        <button
          type="button"
          onClick={() =>
            void action.run(async () => {
              const res = await must(
                api.POST('/v1/webhooks/merchant/{id}/rotate-secret', { params: { path: { id } } }),
              );
              if ('secret' in res.webhook && typeof res.webhook.secret === 'string') setSecret(res.webhook.secret);
            })
          }
        >
          {t('Trocar o secret')}
        </button>
        <button
          type="button"
          onClick={() =>
            void action.run(async () => {
              await must(api.DELETE('/v1/webhooks/merchant/{id}', { params: { path: { id } } }));
              changed();
            })
          }
        >
          {t('Excluir')}
        </button>
        <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          {t('Editar')}
        </button>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {t('Entregas')}
        </button>
      </div>
      <ActionError action={action} />
      {secret ? <ShownOnce label="Secret" testId="webhook-secret" value={secret} /> : null}
      {editing ? (
        <WebhookForm
          edit
          catalogue={props.catalogue}
          initial={{ url: webhook.url, name: webhook.name ?? '', events: webhook.events }}
          submitLabel={t('Salvar')}
          save={async (draft) => {
            const body = changes(webhook, draft);
            if (Object.keys(body).length)
              await must(api.PATCH('/v1/webhooks/merchant/{id}', { params: { path: { id } }, body }));
            setEditing(false);
            changed();
          }}
        />
      ) : null}
      {open ? <Deliveries webhook={webhook} /> : null}
    </li>
  );
}

export function Webhooks() {
  const loaded = useLoad(async () => {
    const [list, catalogue] = await Promise.all([
      must(api.GET('/v1/webhooks/merchant')),
      must(api.GET('/v1/webhooks/merchant/events')),
    ]);
    return { webhooks: list.webhooks, events: catalogue.events };
  }, []);
  const [secret, setSecret] = useState<string>();
  return (
    <section>
      <h1>Webhooks</h1>
      <LoadState loaded={loaded}>
        {(d) => (
          <>
            <WebhookForm
              catalogue={d.events}
              initial={{ url: '', name: '', events: [] }}
              submitLabel={t('Criar webhook')}
              save={async ({ url, name, events }) => {
                const res = await must(
                  api.POST('/v1/webhooks/merchant', {
                    body: { url, ...(name ? { name } : {}), ...(events.length ? { events } : {}) },
                  }),
                );
                setSecret(res.webhook.secret);
                loaded.reload();
              }}
            />
            {secret ? <ShownOnce label="Secret" testId="webhook-secret" value={secret} /> : null}
            <ul class="cards-list">
              {d.webhooks.map((w) => (
                <WebhookRow key={w.id} webhook={w} catalogue={d.events} changed={loaded.reload} />
              ))}
            </ul>
          </>
        )}
      </LoadState>
    </section>
  );
}
