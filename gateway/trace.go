package gateway

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/antlerhq/antler/telemetry"
)

// traced wraps h in the contrib otelhttp instrumentation when rec makes
// spans or metrics: a server span of every request, named by its route
// pattern ("POST /api/threads/{thread_id}/runs") once the mux has matched
// it, else by its method, continuing the W3C traceparent a request
// carries; and the http.server.* metrics. With a nil rec, h itself.
func traced(rec *telemetry.Recorder, h http.Handler) http.Handler {
	tp, mp := rec.TracerProvider(), rec.MeterProvider()
	if tp == nil && mp == nil {
		return h
	}
	opts := []otelhttp.Option{
		otelhttp.WithPropagators(telemetry.Propagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern != "" {
				return r.Pattern
			}
			return r.Method
		}),
	}
	// The providers are always given, so that otelhttp never falls back
	// on the global ones.
	if tp == nil {
		tp = nooptrace.NewTracerProvider()
	}
	if mp == nil {
		mp = noopmetric.NewMeterProvider()
	}
	opts = append(opts, otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp))
	return otelhttp.NewHandler(h, "gateway", opts...)
}

// runContext is the context of a run started by a request: base (the
// server's, which outlives the request) with the request's span context,
// so that the run's spans are in the request's trace.
func runContext(base, req context.Context) context.Context {
	if sc := trace.SpanContextFromContext(req); sc.IsValid() {
		return trace.ContextWithSpanContext(base, sc)
	}
	return base
}
