/**
 * On-demand functions: invocation of function processes and their execution history.
 */
export { FUNCTION_BODY_LIMIT_BYTES, FunctionRequestVariable, FunctionService } from './function-service.js';
export type {
  FunctionResult,
  FunctionServiceOptions,
  HistoryQuery,
  InvokeRequest,
  Invocation,
} from './function-service.js';
