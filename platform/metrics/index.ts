export { ControlMetrics } from './control-metrics.js';
export type { ControlMetricsOptions } from './control-metrics.js';
export { ObservedCounter } from './observed-counter.js';
export type { ObservedCounterOptions } from './observed-counter.js';
export { SummaryTotals } from './summary-totals.js';
export type { SummaryTotal, SummaryTotalsOptions } from './summary-totals.js';
export { UntypedGauge } from './untyped-gauge.js';
export { ScrapeTimeFamily } from './scrape-time-family.js';
export type { ScrapeTimeFamilyOptions, ScrapeTimeSample } from './scrape-time-family.js';
