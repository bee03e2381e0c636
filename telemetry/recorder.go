package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// instrumentationName names the tracer and meter of Antler's spans and
// metrics (the instrumentation scope).
const instrumentationName = "github.com/antlerhq/antler"

// Options configure a Recorder. Every zero value is documented.
type Options struct {
	// TracerProvider makes the spans; nil makes none.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil records none.
	MeterProvider metric.MeterProvider
	// CaptureContent records message contents, tool arguments and tool
	// results on the spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT);
	// false records none of them.
	CaptureContent bool
	// DescribeModel returns the provider (gen_ai.provider.name) and the
	// provider's model id (gen_ai.request.model) of a models[] entry by
	// its name; nil, or "" returned, uses the entry's name as the model
	// and leaves the provider out.
	DescribeModel func(name string) (provider, model string)
	// Logger receives the errors of creating instruments; nil discards.
	Logger *slog.Logger
}

// Recorder makes the spans and records the metrics of runs. It is
// immutable and safe for concurrent use. A nil *Recorder records
// nothing; every method may be called on it.
type Recorder struct {
	o      Options
	tracer trace.Tracer // nil without a TracerProvider
	m      *instruments // nil without a MeterProvider
}

// New returns a Recorder for o, nil when o has neither provider.
func New(o Options) *Recorder {
	if o.TracerProvider == nil && o.MeterProvider == nil {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{o: o}
	if o.TracerProvider != nil {
		r.tracer = o.TracerProvider.Tracer(instrumentationName)
	}
	if o.MeterProvider != nil {
		r.m = newInstruments(o.MeterProvider.Meter(instrumentationName), o.Logger)
	}
	return r
}

// TracerProvider returns the provider of r's spans (nil for a nil r or
// one without spans), for packages that make their own (mcptools, the
// gateway's HTTP spans).
func (r *Recorder) TracerProvider() trace.TracerProvider {
	if r == nil {
		return nil
	}
	return r.o.TracerProvider
}

// MeterProvider returns the provider of r's metrics (nil for a nil r or
// one without metrics).
func (r *Recorder) MeterProvider() metric.MeterProvider {
	if r == nil {
		return nil
	}
	return r.o.MeterProvider
}

// CaptureContent reports whether contents are recorded on spans.
func (r *Recorder) CaptureContent() bool { return r != nil && r.o.CaptureContent }

// Span is one operation in progress: a span when r makes spans, the
// start time for its duration metric. A nil *Span is a no-op.
type Span struct {
	r     *Recorder
	ctx   context.Context // for the metrics' exemplars
	span  trace.Span      // nil without spans
	start time.Time
	// attrs are the metric attributes of the operation.
	attrs []attribute.KeyValue
	// first is the time of the first streamed token (model calls).
	first time.Time
}

// start begins a span called name, returning ctx carrying it.
func (r *Recorder) start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, *Span) {
	s := &Span{r: r, start: time.Now()}
	if r.tracer != nil {
		ctx, s.span = r.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	}
	s.ctx = ctx
	return ctx, s
}

// Start begins an internal span called name with attrs (a checkpoint
// write, a title or summary call). It has no metric of its own.
func (r *Recorder) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, *Span) {
	if r == nil {
		return ctx, nil
	}
	return r.start(ctx, name, trace.SpanKindInternal, attrs...)
}

// End ends a span of Start, recording err as its status.
func (s *Span) End(err error) {
	if s == nil || s.span == nil {
		return
	}
	setError(s.span, err)
	s.span.End()
}

// SetAttributes adds attrs to the span.
func (s *Span) SetAttributes(attrs ...attribute.KeyValue) {
	if s != nil && s.span != nil {
		s.span.SetAttributes(attrs...)
	}
}

// TraceIDs returns the span's trace and span ids in hex, "" when there is
// no span.
func (s *Span) TraceIDs() (traceID, spanID string) {
	if s == nil || s.span == nil {
		return "", ""
	}
	sc := s.span.SpanContext()
	if !sc.IsValid() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}

func setError(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(keyErrorType.String(errorType(err)))
}

// errorType is error.type for err: "cancelled", "deadline_exceeded" or
// the conventions' "_OTHER".
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return "_OTHER"
}

// Checkpoint attributes of a checkpoint span.
func Checkpoint(source string, step int) []attribute.KeyValue {
	return []attribute.KeyValue{keyCheckpointSrc.String(source), keyCheckpointStep.Int(step)}
}
