package mcptools

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/antlerhq/antler/telemetry"
)

// traceTransport wraps the sse and http transport so that every request
// carries the W3C traceparent of its context (telemetry.Transport), when
// the Manager makes spans; base otherwise.
func traceTransport(tp trace.TracerProvider, base http.RoundTripper) http.RoundTripper {
	if tp == nil {
		return base
	}
	return telemetry.Transport(base)
}

// callTraced runs tools/call in a client span named "tools/call <tool>"
// (the MCP semantic conventions), with the span's trace context in the
// request's _meta (traceparent, tracestate), which reaches stdio servers
// too. Without a TracerProvider it is CallTool.
func (m *Manager) callTraced(ctx context.Context, cs *mcp.ClientSession, s *server, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	tp := m.opts.TracerProvider
	if tp == nil {
		return cs.CallTool(ctx, params)
	}
	ctx, span := tp.Tracer("github.com/antlerhq/antler/mcptools").Start(ctx, "tools/call "+params.Name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", params.Name),
			attribute.String("antler.mcp.server", s.name),
			attribute.String("antler.mcp.transport", s.cfg.Type)))
	defer span.End()
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if len(carrier) > 0 {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		for k, v := range carrier {
			params.Meta[k] = v
		}
	}
	r, err := cs.CallTool(ctx, params)
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case r != nil && r.IsError:
		span.SetStatus(codes.Error, "tool error result")
	}
	return r, err
}
