package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/model/modeltest"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/tool"
)

// BenchmarkLoopTelemetry is one run of two loop steps (a model call with
// a tool call, the tool, a model call answering) with telemetry off (a
// nil Recorder), on no-op providers, and recording every span and metric
// with the SDK (spans sampled and batched to no exporter, metrics to a
// manual reader). docs/benchmarks.md has the figures.
func BenchmarkLoopTelemetry(b *testing.B) {
	greet := &tool.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, *tool.Call, json.RawMessage) (*tool.Result, error) {
			return tool.Text("hello"), nil
		}}
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	sdkMP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = sdkTP.Shutdown(context.Background()); _ = sdkMP.Shutdown(context.Background()) })
	cases := []struct {
		name string
		rec  *telemetry.Recorder
	}{
		{"off", nil},
		{"noop", telemetry.New(telemetry.Options{TracerProvider: nooptrace.NewTracerProvider(), MeterProvider: noopmetric.NewMeterProvider()})},
		{"recording", telemetry.New(telemetry.Options{TracerProvider: sdkTP, MeterProvider: sdkMP})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := modeltest.FromScript(modeltest.Script{Loop: true, Turns: []modeltest.Turn{
				{ToolCalls: []model.ToolCall{{ID: "c1", Name: "greet", Arguments: json.RawMessage(`{}`)}}},
				{Text: "done"}}})
			a, err := agent.New(agent.Options{Model: agent.NamedModel("default", m), Tools: []*tool.Tool{greet}, Telemetry: c.rec})
			if err != nil {
				b.Fatal(err)
			}
			in := agent.Input{Messages: []model.Message{model.UserText("hi")}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Invoke(b.Context(), in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
