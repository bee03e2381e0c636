package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Propagator is the W3C trace context (traceparent, tracestate) and
// baggage, the propagation Antler uses on every boundary.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Traceparent returns the W3C traceparent of the span in ctx, "" when
// ctx has no sampled span context.
func Traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// InjectEnv returns env with TRACEPARENT (and TRACESTATE when set) of
// the span in ctx appended, for a child process (an ACP agent, an
// antler:command tool); env itself when ctx has no span context. A
// variable of the same name already in env is overridden by the
// appended one (the last wins in os/exec).
func InjectEnv(ctx context.Context, env []string) []string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	tp := c["traceparent"]
	if tp == "" {
		return env
	}
	env = append(env, "TRACEPARENT="+tp)
	if ts := c["tracestate"]; ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}

// Transport returns a RoundTripper that sets traceparent on every
// request from the span of its context, then sends it with base (nil
// means http.DefaultTransport). It makes no spans of its own.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &injectTransport{base: base}
}

type injectTransport struct{ base http.RoundTripper }

func (t *injectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := propagation.HeaderCarrier{}
	propagation.TraceContext{}.Inject(req.Context(), c)
	if len(c) > 0 {
		req = req.Clone(req.Context()) // a RoundTripper must not modify the request
		for k, v := range c {
			req.Header[k] = v
		}
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the base
// transport, so that the wrapper keeps http.Client.CloseIdleConnections
// working.
func (t *injectTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
