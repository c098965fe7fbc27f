import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One recorded request and the real MAAS 3.4.10 region's answer (test/fixtures/maas-3.4.10/README.md). */
export interface RecordedAnswer {
  n: number;
  label: string;
  key: 'admin' | 'operator' | 'other' | 'anonymous' | 'raw-header';
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  form: [string, string][] | null;
  status: number;
  body: string;
}

/** Every row of test/fixtures/maas-3.4.10/answers.jsonl, in the order they were sent. */
export function recordedAnswers(): RecordedAnswer[] {
  return readFileSync(join(import.meta.dirname, '..', 'fixtures', 'maas-3.4.10', 'answers.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RecordedAnswer);
}
