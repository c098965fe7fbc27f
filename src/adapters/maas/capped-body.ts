import type { Dispatcher } from 'undici';

/**
 * Reads a response body as UTF-8 text, but never more than `maxBytes`: a Content-Length over the
 * cap is refused before reading, and a streamed body is cut off (the connection closed) as soon
 * as it passes the cap, so a huge answer never sits in memory whole.
 */
export async function readCappedBody(response: Dispatcher.ResponseData, maxBytes: number, tooLarge: () => Error): Promise<string> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
