import { sveltekit } from '@sveltejs/kit/vite';
import tailwindcss from 'tailwindcss';
import { defineConfig } from 'vite';

// The UI reads import.meta.env.VITE_API as the base of its API calls: empty means "same origin",
// which is how the embedded server serves it (the bundle crashes if it is left undefined).
process.env.VITE_API ??= '';
process.env.VITE_TEMPORAL_UI_BUILD_TARGET ??= 'local';

export default defineConfig({
  plugins: [sveltekit()],
  css: { postcss: { plugins: [tailwindcss({ config: 'tailwind.config.cjs' })] } },
  define: {
    'import.meta.env.VITE_API': JSON.stringify(process.env.VITE_API),
  },
  build: { chunkSizeWarningLimit: 8000, reportCompressedSize: false },
  logLevel: 'warn',
});
