/**
 * A small time-series chart (uPlot) that follows its container's width; with no points it says
 * "no data" instead of drawing an empty frame.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { html } from './html.js';

/** One line of a chart. */
export interface ChartSeries {
  readonly label: string;
  readonly color: string;
}

export interface ChartProps {
  readonly title: string;
  /** Unit shown on the y axis, e.g. "ms" or "/s". */
  readonly unit: string;
  /** x values in seconds since the epoch. */
  readonly x: readonly number[];
  /** One array of y values (or null gaps) per series. */
  readonly ys: readonly (readonly (number | null)[])[];
  readonly series: readonly ChartSeries[];
  readonly height?: number;
  /** Bars instead of lines (counts per bucket). */
  readonly bars?: boolean;
}

/** The chart, inside a figure with a caption. */
export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const empty = props.x.length === 0 || props.ys.every((ys) => ys.every((y) => y === null));
  useEffect(() => {
    const el = box.current;
    if (el === null || empty) return undefined;
    const width = Math.max(240, el.clientWidth);
    const options: uPlot.Options = {
      width,
      height: props.height ?? 180,
      legend: { show: true },
      cursor: { show: true },
      // One point (or one instant) gets an hour either side rather than a span of years.
      scales: { x: { time: true, range: (_u, min, max) => (min === max ? [min - 3600, max + 3600] : [min, max]) } },
      axes: [{}, { label: props.unit, size: 56 }],
      series: [
        {},
        ...props.series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(props.bars ? { fill: s.color, paths: uPlot.paths.bars!({ size: [0.6, 40] }) } : {}),
        })),
      ],
    };
    const data = [props.x, ...props.ys] as unknown as uPlot.AlignedData;
    if (plot.current === null || !el.contains(plot.current.root)) {
      plot.current?.destroy();
      plot.current = new uPlot(options, data, el);
    } else plot.current.setData(data);
    const observer = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(240, el.clientWidth), height: props.height ?? 180 }),
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [props.x, props.ys, empty]);
  useEffect(
    () => () => {
      plot.current?.destroy();
      plot.current = null;
    },
    [],
  );
  return html`
    <figure class="chart">
      <figcaption>${props.title}</figcaption>
      ${empty ? html`<p class="muted">no data</p>` : html`<div ref=${box} class="chart-box" role="img" aria-label=${`${props.title} chart`}></div>`}
    </figure>`;
}
