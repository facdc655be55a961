// A real HTTP receiver for the notification tests: records every request (headers, body, the
// answer it gave) and answers as the test says: 2xx, 5xx, never (a timeout), or not at all (closed:
// connections refused), reopened on the same port.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Answer = number | 'hang';

export interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly answer: Answer;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** How to answer the n-th request (0-based); default 200. */
  answer: (n: number) => Answer;
  close(): Promise<void>;
  reopen(): Promise<void>;
  stop(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  let server: Server;
  let port = 0;
  const receiver: Receiver = {
    url: '',
    received,
    answer: () => 200,
    async close() {
      for (const r of hanging) r.destroy();
      hanging.clear();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
    async reopen() {
      await listen();
    },
    async stop() {
      if (server.listening) await receiver.close();
    },
  };
  const listen = async (): Promise<void> => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = receiver.answer(received.length);
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answer });
        if (answer === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(answer).end();
      });
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  (receiver as { url: string }).url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}
