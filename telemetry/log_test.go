package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/antlerhq/antler/telemetry"
)

func TestLogHandler_traceIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	rec := telemetry.New(telemetry.Options{TracerProvider: tp})
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")

	ctx, run := rec.StartRun(t.Context(), telemetry.Run{RunID: "r1"})
	log.InfoContext(ctx, "inside")
	log.InfoContext(t.Context(), "outside")
	traceID, spanID := run.TraceIDs()
	run.EndRun("completed", 0, modelUsage(), nil)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log = %q, want 2 lines", buf.String())
	}
	if want := "trace_id=" + traceID + " span_id=" + spanID; traceID == "" || !strings.Contains(lines[0], want) {
		t.Errorf("record in the run = %q, want %q", lines[0], want)
	}
	if !strings.Contains(lines[0], "component=test") {
		t.Errorf("record in the run lost the handler's attributes: %q", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("record outside a span = %q, want no trace_id", lines[1])
	}
}
