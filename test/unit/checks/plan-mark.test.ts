import { describe, expect, it } from 'vitest';
import { planIdInComment, planMarkComment, planMarkInEvent } from '../../../src/features/macs/plan-mark.ts';

describe("fix-macs's mark_broken comment, written and read back", () => {
  const comment = planMarkComment('4c1342b93a3cc441');

  it('names the plan in the comment fix-macs sends', () => {
    expect(comment).toBe('maas-chatops plan 4c1342b93a3cc441: to update the boot MAC; commissioning follows');
  });

  it('reads the plan id back from error_description (3.5+) and from the event description MAAS builds, "(<user>) - <comment>" (3.4)', () => {
    expect(planIdInComment(comment)).toBe('4c1342b93a3cc441');
    expect(planMarkInEvent(`(admin) - ${comment}`)).toEqual({ user: 'admin', planId: '4c1342b93a3cc441' });
  });

  it("someone else's mark is nobody's plan: another comment, no comment (\"(user)\"), or the plan text quoted later in a comment", () => {
    expect(planIdInComment('disk failing')).toBeUndefined();
    expect(planMarkInEvent('(ops)')).toBeUndefined();
    expect(planMarkInEvent('(ops) - disk failing')).toBeUndefined();
    expect(planMarkInEvent(`(ops) - see ${comment}`)).toBeUndefined();
  });
});
