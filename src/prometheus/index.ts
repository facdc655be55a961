// What src/prometheus offers the rest of the project.
export { PrometheusClient, type RangeSeries } from './client.js';
