import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { redactDeep, type Redactor } from '../../core/redact.ts';

/*
 * Bull Board, read-only, mounted under a path of our HTTP routes. The caller checks the
 * credentials first; every JSON answer of its API passes the redactor here (job data, results,
 * failure reasons, stack traces, logs: job data is stored in clear text in Redis).
 */

export interface QueueBoardOptions {
  /** Where the board is served, e.g. /admin/queues. */
  basePath: string;
  /** The queues, listed at request time (JobQueues makes them lazily). */
  queues: () => readonly Queue[];
  redact: Redactor;
}

export type BoardHandler = (req: IncomingMessage, res: ServerResponse) => void;

const SECURITY_HEADERS = {
  // The page loads its scripts and styles from the board's own static files; nothing else, no frames.
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'self'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function queueBoardHandler(options: QueueBoardOptions): BoardHandler {
  const serverAdapter = new ExpressAdapter().setBasePath(options.basePath);
  const adapters = new WeakMap<Queue, BullMQAdapter>();
  const adapterOf = (queue: Queue): BullMQAdapter => {
    let adapter = adapters.get(queue);
    if (!adapter) {
      adapter = new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false });
      adapters.set(queue, adapter);
    }
    return adapter;
  };
  let board: ReturnType<typeof createBullBoard> | undefined;
  const app = serverAdapter.getRouter() as ((req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void) & { disable(setting: string): void };
  app.disable('x-powered-by');

  return (req, res) => {
    const queues = options.queues().map(adapterOf);
    if (board) board.replaceQueues(queues);
    else board = createBullBoard({ queues, serverAdapter, options: { uiConfig: { boardTitle: 'maas-chatops queues' } } });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const inner = url.pathname.slice(options.basePath.length) || '/';
    req.url = `${inner}${url.search}`;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (inner.startsWith('/api/')) redactJsonAnswer(res, options.redact);
    app(req, res, () => {
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    });
  };
}

/**
 * Holds back the body of an API answer and sends it redacted: parsed and walked when it is JSON
 * (a secret JSON-escaped in the text would escape a plain text search), else as text.
 */
function redactJsonAnswer(res: ServerResponse, redact: Redactor): void {
  const chunks: Buffer[] = [];
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  const collect = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
  };
  res.write = ((chunk: unknown, encoding?: unknown) => {
    collect(chunk, encoding);
    return true;
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, encoding?: unknown) => {
    collect(chunk, encoding);
    const text = Buffer.concat(chunks).toString('utf8');
    const clean = redactedJson(text, redact);
    if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(clean));
    return end(clean);
  }) as ServerResponse['end'];
}

function redactedJson(text: string, redact: Redactor): string {
  if (text === '') return text;
  try {
    return JSON.stringify(redactDeep(JSON.parse(text) as unknown, redact));
  } catch {
    return redact(text);
  }
}
