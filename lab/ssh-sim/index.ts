export { startSshServer, type CommandHandler, type SshServerOptions, type SshSimServer } from './server.ts';
export { generateKeyPair, knownHostsLine, type KeyPair } from './keys.ts';
