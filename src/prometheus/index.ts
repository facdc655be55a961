// What src/prometheus offers the rest of the project.
export { PrometheusClient } from './client.js';
