export { ControlMetrics } from './control-metrics.js';
