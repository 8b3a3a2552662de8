/**
 * A small line chart as SVG text, for the benchmark results (no dependency: a chart of three
 * series over three or four points needs no library).
 */
export interface ChartSeries {
  readonly name: string;
  readonly color: string;
  readonly points: ReadonlyArray<{ readonly x: number; readonly y: number }>;
  readonly dashed?: boolean;
}

export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
}

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 70, right: 150, top: 40, bottom: 50 };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A line chart with a log x axis (latencies span 5 to 100 ms) and a linear y axis from 0. */
export function lineChart(options: ChartOptions): string {
  const points = options.series.flatMap((series) => series.points);
  const xs = points.map((point) => point.x);
  const xMin = Math.log10(Math.min(...xs));
  const xMax = Math.log10(Math.max(...xs));
  const yMax = Math.max(...points.map((point) => point.y)) * 1.1;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (value: number) => MARGIN.left + ((Math.log10(value) - xMin) / (xMax - xMin || 1)) * plotWidth;
  const y = (value: number) => MARGIN.top + plotHeight - (value / yMax) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15">${escapeXml(options.title)}</text>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotHeight}" x2="${MARGIN.left + plotWidth}" y2="${MARGIN.top + plotHeight}" stroke="black"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotHeight}" stroke="black"/>`,
    `<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text x="18" y="${MARGIN.top + plotHeight / 2}" text-anchor="middle" transform="rotate(-90 18 ${MARGIN.top + plotHeight / 2})">${escapeXml(options.yLabel)}</text>`,
  ];
  for (const value of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(
      `<text x="${x(value)}" y="${MARGIN.top + plotHeight + 18}" text-anchor="middle">${value}</text>`,
      `<line x1="${x(value)}" y1="${MARGIN.top + plotHeight}" x2="${x(value)}" y2="${MARGIN.top + plotHeight + 4}" stroke="black"/>`,
    );
  }
  for (let tick = 0; tick <= 4; tick += 1) {
    const value = (yMax / 4) * tick;
    parts.push(
      `<line x1="${MARGIN.left}" y1="${y(value)}" x2="${MARGIN.left + plotWidth}" y2="${y(value)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(value) + 4}" text-anchor="end">${Math.round(value)}</text>`,
    );
  }
  options.series.forEach((series, index) => {
    const path = [...series.points]
      .sort((a, b) => a.x - b.x)
      .map((point, i) => `${i === 0 ? 'M' : 'L'}${x(point.x).toFixed(1)},${y(point.y).toFixed(1)}`)
      .join(' ');
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : '';
    parts.push(`<path d="${path}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    for (const point of series.points) {
      parts.push(`<circle cx="${x(point.x)}" cy="${y(point.y)}" r="3" fill="${series.color}"/>`);
    }
    const legendY = MARGIN.top + 10 + index * 20;
    parts.push(
      `<line x1="${WIDTH - MARGIN.right + 15}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 40}" y2="${legendY}" stroke="${series.color}" stroke-width="2"${dash}/>`,
      `<text x="${WIDTH - MARGIN.right + 46}" y="${legendY + 4}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
