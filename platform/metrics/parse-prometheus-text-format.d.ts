// Type declarations of parse-prometheus-text-format (the exposition reader of exposition-reader.ts).
declare module 'parse-prometheus-text-format' {
  interface ParsedSample {
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly timestamp_ms?: string;
    readonly buckets?: Readonly<Record<string, string>>;
    readonly quantiles?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    /** COUNTER, GAUGE, UNTYPED, HISTOGRAM or SUMMARY. */
    readonly type: string;
    readonly metrics: readonly ParsedSample[];
  }
  function parsePrometheusTextFormat(text: string): ParsedFamily[];
  // eslint-disable-next-line no-restricted-syntax -- the shape of a CommonJS module, not our export
  export default parsePrometheusTextFormat;
}
