package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are the metrics of a Recorder (docs/observability.md).
type instruments struct {
	meter        metric.Meter
	runs         metric.Int64Counter
	activeRuns   metric.Int64UpDownCounter
	modelCalls   metric.Int64Counter
	opDuration   metric.Float64Histogram
	tokens       metric.Int64Histogram
	toolCalls    metric.Int64Counter
	toolDuration metric.Float64Histogram
}

// newInstruments creates the instruments on meter. An instrument that
// cannot be created is logged and left a no-op (the SDK returns one with
// its error).
func newInstruments(meter metric.Meter, log *slog.Logger) *instruments {
	m := &instruments{meter: meter}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	m.runs, err = meter.Int64Counter("antler.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Runs that ended, by agent and outcome (stop reason)."))
	keep(err)
	m.activeRuns, err = meter.Int64UpDownCounter("antler.runs.active", metric.WithUnit("{run}"),
		metric.WithDescription("Runs in progress, by agent."))
	keep(err)
	m.modelCalls, err = meter.Int64Counter("antler.model.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Model calls, by provider and model (error.type on failures)."))
	keep(err)
	m.opDuration, err = meter.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of model calls."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	keep(err)
	m.tokens, err = meter.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens of model calls, by model and gen_ai.token.type (input, output)."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	keep(err)
	m.toolCalls, err = meter.Int64Counter("antler.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by tool, source and outcome."))
	keep(err)
	m.toolDuration, err = meter.Float64Histogram("antler.tool.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, by tool, source and outcome."))
	keep(err)
	for _, err := range errs {
		log.Warn("telemetry: cannot create a metric", "err", err)
	}
	return m
}

// set is attrs as a measurement option.
func (m *instruments) set(attrs []attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributes(attrs...)
}

// MCPServer is one MCP server's state for the antler.mcp.servers gauge.
type MCPServer struct {
	Name  string
	State string // mcptools' state: pending, ready, failed, disabled, ...
}

// ObserveMCP registers the antler.mcp.servers gauge, read from servers
// at each collection: 1 per server, with its name and state. It does
// nothing without metrics; the returned func unregisters it.
func (r *Recorder) ObserveMCP(servers func() []MCPServer) (unregister func(), err error) {
	if r == nil || r.m == nil {
		return func() {}, nil
	}
	g, err := r.m.meter.Int64ObservableGauge("antler.mcp.servers", metric.WithUnit("{server}"),
		metric.WithDescription("Configured MCP servers, 1 per server, by name and state."))
	if err != nil {
		return nil, err
	}
	reg, err := r.m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range servers() {
			o.ObserveInt64(g, 1, metric.WithAttributes(keyMCPServer.String(s.Name), keyMCPState.String(s.State)))
		}
		return nil
	}, g)
	if err != nil {
		return nil, err
	}
	return func() { _ = reg.Unregister() }, nil
}
