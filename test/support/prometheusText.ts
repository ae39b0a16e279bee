// Reads the Prometheus text exposition format (what GET /metrics answers) into samples tests can query.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** Metric families by the names their # TYPE lines give (histograms: without _bucket, _sum, _count). */
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(' ');
      types.set(name!, type!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL)) labels[k!] = v!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

/** The sum of every sample of `name` whose labels include `labels`; 0 when there is none. */
export function sumOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

/** sumOf over several scrapes (every node's: a call is counted by the node that answered it). */
export function sumOver(scrapes: Scrape[], name: string, labels: Record<string, string> = {}): number {
  return scrapes.reduce((n, s) => n + sumOf(s, name, labels), 0);
}

/** The one sample of `name` with exactly these labels (besides `node`), or undefined. */
export function valueOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.keys(labels).length;
  const found = scrape.samples.filter(
    (s) => s.name === name && Object.keys(s.labels).filter((k) => k !== 'node').length === want && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/**
 * Every metric name a scrape exposes, as PromQL names them: its samples' names, and the families its # TYPE
 * lines declare (a labelled counter has no sample until it first counts), histograms with their series.
 */
export function exposedNames(scrape: Scrape): Set<string> {
  const names = new Set(scrape.samples.map((s) => s.name));
  for (const [name, type] of scrape.types) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

/** GETs a metrics endpoint and parses it. */
export async function scrape(address: string): Promise<Scrape> {
  const res = await fetch(`http://${address}/metrics`);
  if (res.status !== 200) throw new Error(`GET http://${address}/metrics: ${res.status}`);
  return parsePrometheusText(await res.text());
}
