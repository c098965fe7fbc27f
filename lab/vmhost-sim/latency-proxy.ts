import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface LatencyProxy {
  host: string;
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy that adds a round-trip time: each byte is held rttMs/2 in each direction,
 * and a new connection waits one rttMs before its first byte goes through (the TCP handshake).
 * Order is kept because every chunk in a direction waits the same time.
 */
export async function startLatencyProxy(options: { target: { host: string; port: number }; rttMs: number; host?: string; port?: number }): Promise<LatencyProxy> {
  const oneWay = options.rttMs / 2;
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    sockets.add(client);
    client.setNoDelay(true);
    client.pause();
    setTimeout(() => {
      const upstream = connect(options.target.port, options.target.host);
      upstream.setNoDelay(true);
      sockets.add(upstream);
      relay(client, upstream, oneWay);
      relay(upstream, client, oneWay);
      const teardown = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', teardown).on('close', () => setTimeout(teardown, oneWay));
      upstream.on('error', teardown).on('close', () => setTimeout(teardown, oneWay));
      client.resume();
    }, options.rttMs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function relay(from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk: Buffer) => {
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, delayMs);
  });
  from.on('end', () => setTimeout(() => to.end(), delayMs));
}
