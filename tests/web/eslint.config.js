// ESLint configuration for perfhub's page (web/*.js) and its tests.
'use strict';
const js = require('@eslint/js');

const browser = {
  window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly',
  localStorage: 'readonly', fetch: 'readonly', XMLHttpRequest: 'readonly', URLSearchParams: 'readonly',
  Node: 'readonly', confirm: 'readonly', ResizeObserver: 'readonly', TextEncoder: 'readonly', Blob: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
  console: 'readonly', globalThis: 'readonly', module: 'writable',
};
const node = {
  require: 'readonly', process: 'readonly', module: 'writable', __dirname: 'readonly',
  console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly',
  globalThis: 'readonly', URL: 'readonly', fetch: 'readonly', TextEncoder: 'readonly',
};

module.exports = [
  js.configs.recommended,
  {
    files: ['web/**/*.js'],
    languageOptions: { ecmaVersion: 2020, sourceType: 'script', globals: browser },
    rules: { 'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }], eqeqeq: 'error', strict: ['error', 'function'] },
  },
  {
    files: ['tests/**/*.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'commonjs', globals: node },
    rules: { 'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }], eqeqeq: 'error' },
  },
  {
    /* the browser test: node, plus the functions it hands to the page */
    files: ['tests/web-e2e.js', 'tests/web-e2e-firefox.js', 'tests/web-e2e-views.js', 'tests/web/e2e-common.js', 'tests/web/e2e-views.js'],
    languageOptions: {
      globals: Object.assign({}, node, browser, {
        MutationObserver: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        DataTransfer: 'readonly', File: 'readonly', Event: 'readonly',
      }),
    },
  },
];
