/**
 * What a function's output costs in CloudWatch: the metric series its Embedded Metric Format
 * lines create (a custom metric is billed per distinct name and dimension values, for the hours it
 * is sent), how many of them carry a `Program` dimension, and the bytes of log ingested.
 */

export interface OutputCost {
  /** Distinct series: namespace, metric name and dimension values. */
  readonly series: ReadonlySet<string>;
  /** Distinct series by metric name, those with a `Program` dimension apart. */
  readonly seriesByMetric: Readonly<Record<string, { readonly perProgram: number; readonly other: number }>>;
  /** Values sent (one per metric per EMF line). */
  readonly datapoints: number;
  readonly emfBytes: number;
  /** Every byte written (EMF lines, log lines): what CloudWatch Logs ingests. */
  readonly logBytes: number;
}

interface EmfDirective {
  readonly Namespace?: string;
  readonly Dimensions?: readonly (readonly string[])[];
  readonly Metrics?: readonly { readonly Name?: string }[];
}

/** Reads EMF lines out of a function's output (other lines are counted as log bytes only). */
export function outputCost(output: string): OutputCost {
  const series = new Set<string>();
  const byMetric = new Map<string, { perProgram: Set<string>; other: Set<string> }>();
  let datapoints = 0;
  let emfBytes = 0;
  for (const line of output.split('\n')) {
    if (!line.includes('"CloudWatchMetrics"')) continue;
    let parsed: { _aws?: { CloudWatchMetrics?: readonly EmfDirective[] } } & Record<string, unknown>;
    try {
      parsed = JSON.parse(line.slice(line.indexOf('{')));
    } catch {
      continue;
    }
    const directives = parsed._aws?.CloudWatchMetrics;
    if (directives === undefined) continue;
    emfBytes += Buffer.byteLength(line) + 1;
    for (const directive of directives) {
      for (const dimensions of directive.Dimensions ?? [[]]) {
        const values = [...dimensions]
          .sort()
          .map((name) => `${name}=${String(parsed[name])}`)
          .join(',');
        for (const metric of directive.Metrics ?? []) {
          const name = metric.Name ?? '?';
          const key = `${directive.Namespace}|${name}|${values}`;
          series.add(key);
          datapoints += 1;
          let group = byMetric.get(name);
          if (group === undefined) {
            group = { perProgram: new Set(), other: new Set() };
            byMetric.set(name, group);
          }
          (dimensions.includes('Program') ? group.perProgram : group.other).add(key);
        }
      }
    }
  }
  return {
    series,
    seriesByMetric: Object.fromEntries(
      [...byMetric].map(([name, group]) => [
        name,
        { perProgram: group.perProgram.size, other: group.other.size },
      ]),
    ),
    datapoints,
    emfBytes,
    logBytes: Buffer.byteLength(output),
  };
}
