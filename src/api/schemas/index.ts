export * from './limits.js';
export * from './enums.js';
export * from './ids.js';
export * from './pipe.js';
export * from './service.js';
export * from './endpoint.js';
export * from './stack.js';
export * from './envelope.js';
