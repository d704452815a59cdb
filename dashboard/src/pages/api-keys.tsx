/** API keys: the list (masked), a new one (its value shown once), delete. */
import { useState } from 'preact/hooks';
import { api, must } from '../api';
import { dateTime, t } from '../i18n';
import { ActionError, DataTable, Field, LoadState, ShownOnce, useAction, useLoad } from '../ui';

export function ApiKeys() {
  const list = useLoad(() => must(api.GET('/v1/api-keys')), []);
  const create = useAction();
  const remove = useAction();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<string>();
  return (
    <section>
      <h1>{t('Chaves de API')}</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            const res = await must(
              api.POST('/v1/api-keys', { body: { name, ...(description ? { description } : {}) } }),
            );
            setCreated(res.apiKey.value);
            setName('');
            list.reload();
          });
        }}
      >
        <Field label={t('Nome')} action={create} param="name">
          <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label={t('Descrição')} action={create} param="description">
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={create.busy}>
          {t('Criar chave')}
        </button>
        <ActionError action={create} params={['name', 'description']} />
      </form>
      {created ? <ShownOnce label={t('Valor da chave')} testId="new-key" value={created} /> : null}
      <ActionError action={remove} />
      <LoadState loaded={list}>
        {(d) => (
          <DataTable
            testId="api-keys"
            rows={d.apiKeys}
            rowKey={(k) => k.id}
            columns={[
              { label: t('Nome'), cell: (k) => k.name },
              { label: t('Valor'), cell: (k) => <code>{k.value}</code> },
              { label: t('Criada em'), cell: (k) => dateTime(k.createdAt) },
              { label: t('Último uso'), cell: (k) => (k.lastUsedAt ? dateTime(k.lastUsedAt) : t('nunca')) },
              {
                label: t('Excluir'),
                hidden: true,
                cell: (k) => (
                  <button
                    type="button"
                    aria-label={`${t('Excluir')} ${k.name}`}
                    onClick={() =>
                      void remove.run(async () => {
                        await must(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: k.id } } }));
                        list.reload();
                      })
                    }
                  >
                    {t('Excluir')}
                  </button>
                ),
              },
            ]}
          />
        )}
      </LoadState>
    </section>
  );
}
