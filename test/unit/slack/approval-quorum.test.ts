import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/core/config.ts';
import { ConfigError } from '../../../src/core/errors.ts';
import { silentLogger } from '../../../src/core/log.ts';
import type { PlanStore } from '../../../src/engine/repair/plan-store.ts';
import { approvalHandlers } from '../../../src/edge/slack/approvals.ts';

const yaml = (quorum: string) => `
slack:
  commandChannels: [C0OPS]
  approvers: [U0LEAD1, U0LEAD2]
  approvalsRequiredFor: { ${quorum} }
`;

function handlersFor(quorum: string) {
  const { config } = parseConfigText(yaml(quorum), { path: 'q.yaml', env: {}, readFile: () => '' });
  return () => approvalHandlers({ config, plans: {} as PlanStore, enqueue: async () => 'job', log: silentLogger() });
}

describe('slack.approvalsRequiredFor names real repairs', () => {
  it('a typo (fix-dsn) is refused at start, naming the repairs there are, instead of leaving fix-dns at one approver', () => {
    expect(handlersFor('fix-dsn: 2')).toThrow(ConfigError);
    expect(handlersFor('fix-dsn: 2')).toThrow('slack.approvalsRequiredFor.fix-dsn: no repair "fix-dsn"');
    expect(handlersFor('fix-dns: 2')).not.toThrow();
  });
});
