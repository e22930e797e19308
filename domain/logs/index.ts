export {
  LOG_STREAMS,
  MAX_LOG_LINE_CHARS,
  matchesLogFilter,
  type CaptureOffset,
  type CapturedLine,
  type LogFilter,
  type LogLine,
  type LogQuery,
  type LogSink,
  type LogStream,
} from './log-line.js';
export {
  DEFAULT_LOG_LIMIT,
  MAX_GREP_CHARS,
  MAX_LOG_LIMIT,
  parseLogFollow,
  parseLogGrep,
  parseLogLimit,
  parseLogName,
  parseLogStream,
  parseLogTime,
} from './log-filter-parse.js';
