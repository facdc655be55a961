// ESLint over src, test and bench with typescript-eslint's strict and stylistic type-aware rules,
// on one TypeScript program: the root tsconfig.json, which the project service finds for every file.
// A rule is relaxed here only with the reason next to it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'bench/.compiled-*'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked, ...tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers print as the number (durations, counts, ports); objects, undefined and null stay errors.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // \`() => resolve()\` and \`(m) => logger.warn(m)\` are callbacks whose value nobody reads; the rule
      // still flags a void value used in a condition, an assignment or a block's return.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // An empty arrow is the explicit "ignore": an error listener that only keeps Node from throwing,
      // a rejection already reported elsewhere, a no-op callback. Empty functions and methods still count.
      '@typescript-eslint/no-empty-function': ['error', { allow: ['arrowFunctions'] }],
      // async without await is how a Promise-returning interface is implemented (a fake sleep, a fastify
      // handler, a worker's processor), so that a throw becomes a rejection rather than a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      // An underscore names a parameter a signature requires; a rest sibling is how a member is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // A test or a benchmark reads what its own fixture put there (rows[0]!, a regex group of its
      // output): a wrong `!` fails the run with a TypeError, which is the check it would write anyway.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // vitest types its asymmetric matchers (expect.any, expect.stringMatching, ...) as any.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // A test's handles are typed as its setup leaves them, yet teardown must also run after a setup
      // that threw or a test that never opened one: `await daemon?.stop()` there is deliberate.
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
);
