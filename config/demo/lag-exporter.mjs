// The compose demo's stand-in for a Kafka-lag exporter: serves kafka_consumergroup_lag for the demo
// pipe orders-lag (consumer group pipescaler-orders-lag) on :9308/metrics, rising and falling over
// a 30-minute wave between 0 and 600,000 so Grafana shows replicas following the lag inside the
// schedule's bounds. No dependencies: plain node:http.
import { createServer } from 'node:http';

const PERIOD_MS = 30 * 60_000;
const PEAK = 600_000;
const port = Number(process.env.PORT ?? 9308);

function lag(now) {
  const phase = (now % PERIOD_MS) / PERIOD_MS;
  return Math.round((PEAK * (1 - Math.cos(2 * Math.PI * phase))) / 2);
}

createServer((req, res) => {
  if (req.url !== '/metrics') {
    res.writeHead(404).end();
    return;
  }
  res
    .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
    .end(
      [
        '# HELP kafka_consumergroup_lag Demo consumer lag (messages) of a consumer group and topic.',
        '# TYPE kafka_consumergroup_lag gauge',
        `kafka_consumergroup_lag{consumergroup="pipescaler-orders-lag",topic="orders"} ${lag(Date.now())}`,
        '',
      ].join('\n'),
    );
}).listen(port, '0.0.0.0', () => console.log(`demo lag exporter on :${port}/metrics`));
