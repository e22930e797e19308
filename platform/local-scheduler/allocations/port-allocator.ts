/**
 * Port allocator: picks free loopback ports for dynamic allocation ports.
 */
import net from 'node:net';

/** Asks the kernel for a free port on `host`, retrying while it returns one in `exclude`. */
export async function pickFreePort(host: string, exclude: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once('error', reject);
      server.listen({ port: 0, host, exclusive: true }, () => {
        const address = server.address();
        const value = typeof address === 'object' && address ? address.port : 0;
        server.close(() => resolve(value));
      });
    });
    if (port > 0 && !exclude.has(port)) return port;
  }
  throw new Error(`port allocator: no free port on ${host} after 50 attempts`);
}
