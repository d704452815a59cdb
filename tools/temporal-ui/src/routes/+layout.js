// A client-only app: every page is rendered in the browser from the API's answers.
import i18next from 'i18next';
import LanguageDetector from 'i18next-browser-languagedetector';
import { i18nNamespaces } from '@temporalio/ui/i18n/index';
import resources from '@temporalio/ui/i18n/locales/index';

export const ssr = false;
export const prerender = false;

export async function load() {
  if (!i18next.isInitialized) {
    await i18next.use(LanguageDetector).init({
      fallbackLng: 'en',
      load: 'languageOnly',
      ns: i18nNamespaces,
      defaultNS: 'common',
      detection: { order: ['querystring', 'localStorage', 'navigator'], caches: ['localStorage'] },
      resources,
    });
  }
}
