export * from './schemas/index.js';
export * from './endpoints.js';
export * from './errors.js';
export * from './quantity.js';
export * from './client.js';
export * from './client-events.js';
export * from './retry-policy.js';
export * from './issue-path.js';
