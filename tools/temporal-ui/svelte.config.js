// Our SvelteKit shell around @temporalio/ui: a client-only single-page app (adapter-static with an
// index.html fallback) that the embedded Temporal server serves beside its HTTP API (README.md).
import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** @type {import('@sveltejs/kit').Config} */
export default {
  // `script: true`: TypeScript in <script lang="ts"> (enums included) is compiled, not just stripped.
  preprocess: vitePreprocess({ script: true }),
  kit: {
    adapter: adapter({ pages: 'build', assets: 'build', fallback: 'index.html', strict: false }),
    prerender: { entries: [] },
  },
};
