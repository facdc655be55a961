// A tiny node:http server for what the embedded cloud cannot produce on purpose: HTML bodies,
// truncated JSON, wrong types, slow headers, dropped connections. Each request is answered by the
// next responder of a script (the last one repeats) and recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Responder = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface RawServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function rawServer(script: readonly Responder[]): Promise<RawServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const respond = script[Math.min(requests.length - 1, script.length - 1)];
      respond?.(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Responder =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

export const text =
  (status: number, body: string, type = 'text/html'): Responder =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };

/** Drops the connection without an answer (the client sees a reset / socket error). */
export const reset: Responder = (req) => {
  req.socket.destroy();
};

/** Never answers; the socket is closed by close(). */
export const hang: Responder = () => {};

/** Sends headers and half a body, then stalls. */
export const stallBody: Responder = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"status":200,');
};
