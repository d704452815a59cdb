/** MED infractions: the list with deadlines, a detail, and a defense with files. */
import { useState } from 'preact/hooks';
import { api, must, postForm } from '../api';
import { brl, dateTime, t } from '../i18n';
import { ActionError, DataTable, Field, LoadState, useAction, useLoad } from '../ui';

export function Infractions() {
  const list = useLoad(() => must(api.GET('/v1/infractions', { params: { query: { limit: '50' } } })), []);
  return (
    <section>
      <h1>{t('Infrações')}</h1>
      <LoadState loaded={list}>
        {(d) => (
          <DataTable
            testId="infractions"
            rows={d.infractions}
            rowKey={(i) => i.id}
            columns={[
              { label: t('Criada em'), cell: (i) => <a href={`#/infractions/${i.id}`}>{dateTime(i.createdAt)}</a> },
              { label: t('Valor'), num: true, cell: (i) => brl(i.amount) },
              { label: t('Status'), cell: (i) => i.status },
              { label: t('Prazo da defesa'), cell: (i) => dateTime(i.defenseDeadline) },
            ]}
          />
        )}
      </LoadState>
    </section>
  );
}

export function InfractionDetail({ id }: { id: string }) {
  const loaded = useLoad(() => must(api.GET('/v1/infractions/{id}', { params: { path: { id } } })), [id]);
  const action = useAction();
  const [text, setText] = useState('');
  const [files, setFiles] = useState<FileList | null>(null);
  return (
    <section>
      <p>
        <a href="#/infractions">{t('Voltar')}</a>
      </p>
      <LoadState loaded={loaded}>
        {({ infraction: i }) => (
          <>
            <h1>
              {t('Infrações')}: {brl(i.amount)}
            </h1>
            <dl class="facts">
              <dt>{t('Status')}</dt>
              <dd data-testid="infraction-status">{i.status}</dd>
              <dt>{t('Motivo')}</dt>
              <dd>{i.reason ?? '—'}</dd>
              <dt>{t('Bloqueado')}</dt>
              <dd>{brl(i.blockedAmount)}</dd>
              <dt>{t('Prazo da defesa')}</dt>
              <dd>{dateTime(i.defenseDeadline)}</dd>
              <dt>{t('Cobranças')}</dt>
              <dd>{i.chargeId ? <a href={`#/charges/${i.chargeId}`}>{i.chargeId}</a> : '—'}</dd>
            </dl>
            <h2>{t('Defesa')}</h2>
            {i.defenses.map((d) => (
              <div key={d.id} class="card" data-testid="defense">
                <p>
                  {d.status} — {dateTime(d.createdAt)}
                </p>
                <p>{d.defense}</p>
                <ul>
                  {d.files.map((f) => (
                    <li key={f.id}>
                      <a href={`/dashboard/api/v1/infractions/${i.id}/defenses/${d.id}/files/${f.id}`}>{f.name}</a>
                    </li>
                  ))}
                </ul>
              </div>
            ))}
            {i.defenses.length === 0 ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void action.run(async () => {
                    const form = new FormData();
                    form.set('defense', text);
                    for (const f of Array.from(files ?? [])) form.append('files', f);
                    await postForm(`/v1/infractions/${encodeURIComponent(id)}/defenses`, form);
                    loaded.reload();
                  });
                }}
              >
                <Field label={t('Defesa')} action={action} param="defense">
                  <textarea
                    name="defense"
                    rows={5}
                    maxLength={1000}
                    value={text}
                    onInput={(e) => setText(e.currentTarget.value)}
                  />
                </Field>
                <Field label={t('Arquivos (PDF, PNG, JPEG)')} action={action} param="files">
                  <input
                    name="files"
                    type="file"
                    multiple
                    accept="application/pdf,image/png,image/jpeg"
                    onChange={(e) => setFiles(e.currentTarget.files)}
                  />
                </Field>
                <button type="submit" disabled={action.busy}>
                  {t('Enviar defesa')}
                </button>
                <ActionError action={action} params={['defense', 'files']} />
              </form>
            ) : null}
          </>
        )}
      </LoadState>
    </section>
  );
}
