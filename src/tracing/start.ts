// Turns tracing on in this process: an SDK tracer provider that exports spans by OTLP/HTTP (JSON), the W3C
// trace context and baggage propagators, and a context manager. Off unless called; the node calls it for a
// config `tracing` section, an application for its client (docs/tracing.md).
import { context, propagation, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { AsyncContextManager } from './asyncContextManager';

export interface TracingOptions {
  /**
   * The collector's OTLP/HTTP base address (http://host:4318): spans go to its /v1/traces. Absent: the
   * standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT variables.
   */
  otlpEndpoint?: string;
  serviceName: string;
  /** The share of new traces recorded, 0..1 (default 1); a trace begun upstream follows its parent's choice. */
  sampleRatio?: number;
}

export interface Tracing {
  /** Sends every finished span now. */
  flush(): Promise<void>;
  /** Flushes and unregisters: tracing is off again in this process. */
  shutdown(): Promise<void>;
}

export function startTracing(opts: TracingOptions): Tracing {
  const exporter = new OTLPTraceExporter(opts.otlpEndpoint === undefined ? {} : { url: `${opts.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(opts.sampleRatio ?? 1) }),
    // Short batches: a lock's life is seconds, and a node may be killed.
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
  });
  const manager = new AsyncContextManager();
  context.setGlobalContextManager(manager);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(provider);
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
