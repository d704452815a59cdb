// Tailwind for our shell and for the UI package's own components, with the package's theme plugin.
const fs = require('node:fs');
const path = require('node:path');
const defaultTheme = require('tailwindcss/defaultTheme');

/** The published package's dist folder: here or hoisted to the workspace root's node_modules. */
function uiDist() {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', '@temporalio', 'ui', 'dist');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error('@temporalio/ui is not installed (run npm install)');
  }
}

const dist = uiDist();
const theme = require(path.join(dist, 'theme', 'plugin.js'));

module.exports = {
  content: [path.join(__dirname, 'src/**/*.{html,js,svelte}'), path.join(dist, '**/*.{js,svelte}')],
  darkMode: ['selector', '[data-theme="dark"]'],
  theme: {
    fontFamily: {
      sans: ['Inter', ...defaultTheme.fontFamily.sans],
      mono: ['Noto Sans Mono', ...defaultTheme.fontFamily.mono],
    },
    extend: { animation: { 'spin-slow': 'spin 3s linear infinite' }, zIndex: { 100: '100' } },
  },
  plugins: [theme.default, theme.textStyles],
};
