/**
 * A port for a test's fixed `hostPort` or `port:`: below the kernel's ephemeral range (32768-60999
 * on Linux), so no socket another test opens meanwhile is given it by the kernel, and free on
 * loopback and on all addresses when chosen. A random one of 12,000 keeps concurrent tests apart.
 */
import net from 'node:net';

const LOW = 20_000;
const HIGH = 32_000;

function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A free port in [20000, 32000). */
export async function staticPort(): Promise<number> {
  for (;;) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if ((await bindable(port, '127.0.0.1')) && (await bindable(port, '0.0.0.0'))) return port;
  }
}
