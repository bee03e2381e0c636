package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/antlerhq/antler/telemetry"
)

// TestTelemetry_continuesIncomingTraceparent: a request with a W3C
// traceparent gets a server span in that trace, child of the caller's
// span, named by its route; the run it starts is traced under it.
func TestTelemetry_continuesIncomingTraceparent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newEnv(t, envOptions{telemetry: telemetry.New(telemetry.Options{TracerProvider: tp})})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tid := uuid.NewString()
	body := `{"assistant_id":"lead_agent","input":{"messages":[{"type":"human","content":"hi"}]},"stream_mode":["values"]}`
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.url+"/api/threads/"+tid+"/runs/stream", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/stream: %d", resp.StatusCode)
	}
	e.gw.Close() // waits for the run's goroutine, which ends its span

	var server, run *tracetest.SpanStub
	spans := exp.GetSpans()
	for i, s := range spans {
		switch s.Name {
		case "POST /api/threads/{tid}/runs/stream":
			server = &spans[i]
		case "invoke_agent lead_agent":
			run = &spans[i]
		}
	}
	if server == nil || run == nil {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans %q, want the route's server span and the run's", names)
	}
	if got := server.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("server span trace = %s, want the incoming %s", got, traceID)
	}
	if got := server.Parent.SpanID().String(); got != parentID || !server.Parent.IsRemote() {
		t.Errorf("server span parent = %s (remote %v), want the caller's %s", got, server.Parent.IsRemote(), parentID)
	}
	if run.SpanContext.TraceID().String() != traceID || run.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("run span in trace %s under %s, want trace %s under the server span %s", run.SpanContext.TraceID(),
			run.Parent.SpanID(), traceID, server.SpanContext.SpanID())
	}
}
