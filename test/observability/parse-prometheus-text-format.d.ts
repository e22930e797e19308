// Type declaration of the untyped exposition parser the metrics tests use.
declare module 'parse-prometheus-text-format' {
  interface ParsedMetric {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly count?: string;
    readonly sum?: string;
    readonly buckets?: Record<string, string>;
    readonly quantiles?: Record<string, string>;
  }
  interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: string;
    readonly metrics: readonly ParsedMetric[];
  }
  // eslint-disable-next-line no-restricted-syntax -- the shape of a CommonJS module, not our export
  export default function parse(text: string): ParsedFamily[];
}
