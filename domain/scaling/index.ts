/** Autoscaling: metrics, recommendations and their stabilization. */
export {
  AutoscaleMetric,
  isAutoscaleMetric,
  isRequestMetric,
  recommendCount,
  SCALE_TOLERANCE,
  ScaleStabilizer,
} from './autoscale-policy.js';
export type { ScaleDecision, ScaleObservation, ScaleRecommendation } from './autoscale-policy.js';
