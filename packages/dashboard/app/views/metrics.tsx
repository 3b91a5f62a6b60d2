import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { metricsText } from '../api';
import { sampleOf, type Sample } from '../prometheus';
import { Failure, Panel } from './common';

/** How often `/:metrics` is read, and how many readings the charts keep (two minutes). */
const POLL_MS = 2000;
const SAMPLES_MAX = 60;

interface Chart {
  title: string;
  unit: string;
  series: { label: string; value: (sample: Sample, previous: Sample | undefined) => number | null }[];
}

const MIB = 1024 * 1024;

const CHARTS: readonly Chart[] = [
  { title: 'Requests per second', unit: 'req/s', series: [{ label: 'requests', value: (s, p) => (p === undefined || s.at <= p.at ? null : Math.max(0, (s.requests - p.requests) / (s.at - p.at))) }] },
  { title: 'Memory', unit: 'MiB', series: [
    { label: 'resident', value: (s) => s.residentBytes / MIB },
    { label: 'heap used', value: (s) => s.heapUsedBytes / MIB },
  ] },
  { title: 'Documents', unit: 'documents', series: [{ label: 'documents', value: (s) => s.documents }] },
  { title: 'HTTP connections', unit: 'connections', series: [{ label: 'open', value: (s) => s.connections }] },
];

const COLOURS = ['#2563eb', '#db2777'];

/** Live charts of the server's metrics (API.md §12.3), read every two seconds while the view is open. */
export function MetricsView() {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<Error | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    const read = () => metricsText().then(
      (text) => { if (!stopped) { setError(undefined); setSamples((all) => [...all, sampleOf(text, Date.now() / 1000)].slice(-SAMPLES_MAX)); } },
      (err: unknown) => { if (!stopped) setError(err instanceof Error ? err : new Error(String(err))); },
    );
    void read();
    const timer = setInterval(read, POLL_MS);
    return () => { stopped = true; clearInterval(timer); };
  }, []);
  return (
    <Panel title="Metrics" testId="metrics">
      <p>From <code>/:metrics</code>, every {POLL_MS / 1000} s (the last {SAMPLES_MAX} readings).</p>
      <Failure error={error} />
      <div class="charts">{CHARTS.map((chart) => <ChartView key={chart.title} chart={chart} samples={samples} />)}</div>
    </Panel>
  );
}

function ChartView({ chart, samples }: { chart: Chart; samples: Sample[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [
    samples.map((s) => s.at),
    ...chart.series.map((series) => samples.map((s, i) => series.value(s, samples[i - 1]))),
  ];
  useEffect(() => {
    const element = host.current as HTMLDivElement;
    plot.current = new uPlot({
      width: 460, height: 200, title: chart.title,
      scales: { x: { time: true } },
      axes: [{}, { label: chart.unit, size: 60 }],
      series: [{}, ...chart.series.map((series, i) => ({ label: series.label, stroke: COLOURS[i % COLOURS.length], width: 2 }))],
    }, data, element);
    return () => { plot.current?.destroy(); plot.current = null; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chart]);
  useEffect(() => { plot.current?.setData(data); });
  return <div class="chart" data-testid="chart" data-points={samples.length} ref={host} />;
}
