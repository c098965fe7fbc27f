import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  { files: ['src/cli.ts', 'lab/**', 'bench/**', 'bin/**', 'scripts/**', 'test/**'], rules: { 'no-console': 'off' } },
  {
    // The Slack edge and the audit trail sit below the subcommands and jobs: only the composition root wires them together.
    files: ['src/edge/slack/**', 'src/engine/audit/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/commands/*', '**/jobs/*'], message: 'Only the composition root (src/main.ts, src/cli.ts) imports commands/ or jobs/.' }] }] },
  },
);
