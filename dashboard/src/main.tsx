/** The merchants' dashboard (docs/dashboard.md): sign-in, then one page per hash route. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, signIn, signOut, whenSessionExpires, type SessionInfo } from './api';
import { lang, setLang, t } from './i18n';
import { signal, useValue } from './state';
import { ActionError, TextField, useAction } from './ui';
import { Overview } from './pages/overview';
import { ChargeDetail, Charges } from './pages/charges';
import { Statement } from './pages/statement';
import { Withdrawals } from './pages/withdrawals';
import { ApiKeys } from './pages/api-keys';
import { Webhooks } from './pages/webhooks';
import { InfractionDetail, Infractions } from './pages/infractions';

type SessionState = { kind: 'loading' } | { kind: 'signed-out'; expired?: boolean } | ({ kind: 'in' } & SessionInfo);
const session = signal<SessionState>({ kind: 'loading' });
whenSessionExpires(() => {
  if (session.get().kind === 'in') session.set({ kind: 'signed-out', expired: true });
});

const route = signal(location.hash.slice(1) || '/overview');
addEventListener('hashchange', () => route.set(location.hash.slice(1) || '/overview'));

const NAV: Array<[string, string]> = [
  ['/overview', 'Visão geral'],
  ['/charges', 'Cobranças'],
  ['/statement', 'Extrato'],
  ['/withdrawals', 'Saques'],
  ['/api-keys', 'Chaves de API'],
  ['/webhooks', 'Webhooks'],
  ['/infractions', 'Infrações'],
];

function SignIn({ expired }: { expired?: boolean }) {
  const action = useAction();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  return (
    <main class="signin">
      <h1>{t('Painel do lojista')}</h1>
      {expired ? <p role="status">{t('Sua sessão expirou: entre de novo.')}</p> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => session.set({ kind: 'in', ...(await signIn(email, password)) }));
        }}
      >
        <TextField
          label={t('E-mail')}
          name="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          set={setEmail}
          action={action}
        />
        <TextField
          label={t('Senha')}
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          set={setPassword}
          action={action}
        />
        <button type="submit" disabled={action.busy}>
          {t('Entrar')}
        </button>
        <ActionError action={action} params={['email', 'password']} />
      </form>
    </main>
  );
}

function Page({ path, sandbox }: { path: string; sandbox: boolean }) {
  const [, section, id] = path.split('/');
  switch (section) {
    case 'charges':
      return id ? <ChargeDetail id={id} sandbox={sandbox} /> : <Charges sandbox={sandbox} />;
    case 'statement':
      return <Statement />;
    case 'withdrawals':
      return <Withdrawals />;
    case 'api-keys':
      return <ApiKeys />;
    case 'webhooks':
      return <Webhooks />;
    case 'infractions':
      return id ? <InfractionDetail id={id} /> : <Infractions />;
    default:
      return <Overview />;
  }
}

function LangSwitch() {
  const current = useValue(lang);
  return (
    <label class="lang">
      <span>{t('Idioma')}</span>
      <select value={current} onChange={(e) => setLang(e.currentTarget.value === 'en' ? 'en' : 'pt-BR')}>
        <option value="pt-BR">Português</option>
        <option value="en">English</option>
      </select>
    </label>
  );
}

function App() {
  const state = useValue(session);
  const path = useValue(route);
  useValue(lang);
  useEffect(() => {
    currentSession().then(
      (info) => session.set({ kind: 'in', ...info }),
      () => session.set({ kind: 'signed-out' }),
    );
  }, []);
  if (state.kind === 'loading') return <p>{t('Carregando…')}</p>;
  if (state.kind === 'signed-out')
    return (
      <>
        <header class="top">
          <LangSwitch />
        </header>
        <SignIn expired={state.expired} />
      </>
    );
  const section = `/${path.split('/')[1] ?? ''}`;
  return (
    <>
      <header class="top">
        <strong>pixflow</strong>
        <nav aria-label={t('Navegação')}>
          {NAV.map(([href, label]) => (
            <a key={href} href={`#${href}`} aria-current={section === href ? 'page' : undefined}>
              {t(label)}
            </a>
          ))}
        </nav>
        <LangSwitch />
        <button
          type="button"
          onClick={() => {
            void signOut().finally(() => session.set({ kind: 'signed-out' }));
          }}
        >
          {t('Sair')}
        </button>
      </header>
      <main>
        <Page path={path} sandbox={state.sandbox} />
      </main>
    </>
  );
}

document.documentElement.lang = lang.get();
const root = document.getElementById('app');
if (root) render(<App />, root);
