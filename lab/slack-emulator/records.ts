/** What the emulator saw and did, for assertions and for the lab's printed channel. */

export type TokenKind = 'bot' | 'app' | 'none' | 'invalid';

export interface ApiCall {
  /** Order across every record of this emulator. */
  seq: number;
  at: number;
  method: string;
  /** The request's parameters without the token. */
  params: Record<string, unknown>;
  auth: TokenKind;
  status: number;
  response: Record<string, unknown>;
}

export type MessageSource = 'chat.postMessage' | 'chat.postEphemeral' | 'response_url' | 'ack';

export interface MessageUpdate {
  seq: number;
  at: number;
  via: 'chat.update' | 'response_url';
  text: string;
  blocks?: unknown[];
}

export interface EmulatedMessage {
  seq: number;
  at: number;
  channel: string;
  ts: string;
  threadTs?: string;
  /** Current text and blocks, with every update applied. */
  text: string;
  blocks?: unknown[];
  /** Seen only by `user`. */
  ephemeral: boolean;
  user?: string;
  via: MessageSource;
  /** The response_url it was posted through (or the invocation's, for an ack body). */
  responseUrl?: string;
  updates: MessageUpdate[];
  /** The text and blocks as first posted, before any update. */
  original: { text: string; blocks?: unknown[] };
  deleted: boolean;
  /** Message metadata (chat.postMessage `metadata`), as conversations.history returns it with include_all_metadata. */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Files shared with this message (files.completeUploadExternal). */
  files?: EmulatedFile[];
}

/** A file uploaded through files.getUploadURLExternal, its upload URL, and files.completeUploadExternal. */
export interface EmulatedFile {
  id: string;
  filename: string;
  /** The length announced to files.getUploadURLExternal. */
  length: number;
  title?: string;
  /** What was sent to the upload URL (UTF-8). */
  content?: string;
  /** Set once completed: where it was shared. */
  channel?: string;
  threadTs?: string;
}

export interface Invocation {
  seq: number;
  at: number;
  kind: 'slash_command' | 'block_actions';
  via: 'http' | 'socket';
  user: string;
  channel: string;
  command?: string;
  text?: string;
  actionId?: string;
  value?: string;
  messageTs?: string;
  responseUrl: string;
  /** HTTP status the app answered (HTTP), or whether it acked in time (Socket Mode). */
  status?: number;
  envelopeId?: string;
  acked?: boolean;
}

export interface SocketAck {
  seq: number;
  at: number;
  envelopeId: string;
  payload: Record<string, unknown> | undefined;
}

export interface SocketConnection {
  seq: number;
  at: number;
  id: number;
  open: boolean;
}
