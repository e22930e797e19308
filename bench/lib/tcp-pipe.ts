/**
 * The floor of a proxy hop for the benches: a bare TCP pipe in its own process that parses nothing.
 */
import { spawn } from 'node:child_process';

/** The floor of a proxy hop: a TCP pipe to `port` in its own process, parsing nothing. */
export async function startTcpPipe(port: number): Promise<{ port: number; pid: number; stop(): void }> {
  const code = `const net = require('node:net');
const server = net.createServer((client) => {
  const upstream = net.connect(${port}, '127.0.0.1');
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const listening = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once('exit', (exitCode) => reject(new Error(`the TCP pipe exited with ${exitCode}`)));
  });
  return { port: listening, pid: child.pid!, stop: () => child.kill() };
}
