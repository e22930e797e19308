/**
 * Local registry: the embedded registry implementation.
 */
export { LocalRegistry } from './local-registry.js';
