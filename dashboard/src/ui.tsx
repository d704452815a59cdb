/** Small pieces every page uses: loading data, running an action, showing the API's message where it belongs. */
import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiFailure } from './api';
import { t } from './i18n';

export interface Loaded<T> {
  data?: T;
  error?: string;
  reload: () => void;
}

/** Runs `load` on mount and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (err: unknown) => live && setState({ error: err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((n) => n + 1), []) };
}

export interface Action {
  busy: boolean;
  error?: ApiFailure;
  run: (work: () => Promise<void>) => Promise<void>;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiFailure>();
  const run = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err instanceof ApiFailure ? err : new ApiFailure(err instanceof Error ? err.message : String(err)));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** The API's message for a field, when the error names it. */
export function FieldError({ action, param }: { action: Action; param: string }) {
  if (!action.error || action.error.param !== param) return null;
  return (
    <p class="error" role="alert" data-param={param}>
      {action.error.message}
    </p>
  );
}

/** The API's message beside the action's button, when it names no field of the form. */
export function ActionError({ action, params = [] }: { action: Action; params?: string[] }) {
  if (!action.error || (action.error.param && params.includes(action.error.param))) return null;
  return (
    <p class="error" role="alert">
      {action.error.message}
    </p>
  );
}

export function Field(props: { label: string; children: ComponentChildren; action?: Action; param?: string }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.action && props.param ? <FieldError action={props.action} param={props.param} /> : null}
    </label>
  );
}

/** An input bound to `value`, labelled, with the API's message for `param` (its `name` unless told). */
export function TextField(
  props: InputHTMLAttributes<HTMLInputElement> & {
    label: string;
    name: string;
    value: string;
    set: (value: string) => void;
    action?: Action;
    param?: string;
  },
) {
  const { label, set, action, param = props.name, ...input } = props;
  return (
    <Field label={label} action={action} param={param}>
      <input {...input} onInput={(e) => set(e.currentTarget.value)} />
    </Field>
  );
}

export interface Column<T> {
  label: string;
  /** The header is read to screen readers only (a column of buttons). */
  hidden?: boolean;
  /** Right-aligned tabular figures, header included (money). */
  num?: boolean;
  testId?: string;
  cell: (row: T) => ComponentChildren;
}

/** A table of `rows`, one column each; with no rows, the empty-state line instead. */
export function DataTable<T>(props: { testId: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string }) {
  if (props.rows.length === 0) return <p>{t('Nada por aqui ainda.')}</p>;
  return (
    <table data-testid={props.testId}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c.label} scope="col" class={c.num ? 'num' : undefined}>
              {c.hidden ? <span class="sr-only">{c.label}</span> : c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)}>
            {props.columns.map((c) => (
              <td key={c.label} class={c.num ? 'num' : undefined} data-testid={c.testId}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function LoadState<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error)
    return (
      <p class="error" role="alert">
        {loaded.error}
      </p>
    );
  if (loaded.data === undefined) return <p aria-live="polite">{t('Carregando…')}</p>;
  return <>{children(loaded.data)}</>;
}

export function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      // Started on purpose: a refused clipboard lands in the second callback, which resets the label.
      onClick={() =>
        void navigator.clipboard.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        )
      }
    >
      {copied ? t('Copiado') : t('Copiar')}
    </button>
  );
}

/** A value the API shows only once (a new key, a webhook's secret): the warning, the value, a copy button. */
export function ShownOnce({ label, testId, value }: { label: string; testId: string; value: string }) {
  return (
    <div class="once" role="status">
      <p>
        <strong>{t('Guarde este valor agora: ele não será mostrado de novo.')}</strong>
      </p>
      <Field label={label}>
        <input readonly data-testid={testId} value={value} />
      </Field>
      <CopyButton text={value} />
    </div>
  );
}

export function Pager(props: { page: number; limit: number; total: number; go: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.limit));
  return (
    <nav class="pager" aria-label={t('Página')}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.go(props.page - 1)}>
        {t('Anterior')}
      </button>
      <span>
        {t('Página')} {props.page} / {pages}
      </span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.go(props.page + 1)}>
        {t('Próxima')}
      </button>
    </nav>
  );
}
