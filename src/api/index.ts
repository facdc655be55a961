export * from './schemas/index.js';
export * from './endpoints.js';
export * from './errors.js';
export * from './quantity.js';
