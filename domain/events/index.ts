export { Severity, discardEvents } from './event-port.js';
export type { EmitResult, EventEmitterPort, EventInput } from './event-port.js';
