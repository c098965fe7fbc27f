import { describe, expect, it } from 'vitest';
import { helpText } from '../../../commands/help.ts';
import { commandList } from '../../../commands/index.ts';

describe('/maas help', () => {
  it('starts every summary in one column, after the longest usage, so none runs into its usage', () => {
    const rows = helpText(commandList).split('\n').slice(1);
    expect(rows).toHaveLength(commandList.length);
    const columns = rows.map((row, i) => row.indexOf(commandList[i]!.summary));
    expect(new Set(columns).size).toBe(1);
    for (const [i, row] of rows.entries()) expect(row.slice(0, columns[0]).trimEnd(), row).toBe(`  /maas ${commandList[i]!.usage}`);
  });
});
