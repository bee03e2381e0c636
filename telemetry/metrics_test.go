package telemetry_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/telemetry"
)

func modelUsage() model.Usage { return model.Usage{InputTokens: 12, OutputTokens: 5} }

// points renders the data points of every metric collected by reader as
// "metric{k=v,...} value" (histograms: their count and sum).
func points(t *testing.T, reader *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []string
	label := func(name string, set attribute.Set) string {
		var kv []string
		for _, a := range set.ToSlice() {
			kv = append(kv, string(a.Key)+"="+a.Value.String())
		}
		return name + "{" + strings.Join(kv, ",") + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, label(m.Name, p.Attributes)+" "+itoa(p.Value))
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out = append(out, label(m.Name, p.Attributes)+" "+itoa(p.Value))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					out = append(out, label(m.Name, p.Attributes)+" count="+itoa(int64(p.Count))+" sum="+itoa(p.Sum))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, label(m.Name, p.Attributes)+" count="+itoa(int64(p.Count)))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestRecorder_metrics records two runs (one failing), their model calls
// and tool calls, and reads every metric through a manual reader.
func TestRecorder_metrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	rec := telemetry.New(telemetry.Options{MeterProvider: mp,
		DescribeModel: func(string) (string, string) { return "openai", "gpt-x" }})
	unregister, err := rec.ObserveMCP(func() []telemetry.MCPServer {
		return []telemetry.MCPServer{{Name: "web", State: "ready"}, {Name: "db", State: "failed"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()

	ctx, run := rec.StartRun(t.Context(), telemetry.Run{})
	_, chat := rec.StartModel(ctx, "default", nil)
	chat.EndModel(&model.Response{Usage: modelUsage()}, nil)
	_, tool := rec.StartTool(ctx, telemetry.Tool{Name: "web_search", Meta: map[string]string{"source": "mcp", "mcp_server": "web"}})
	tool.EndTool(telemetry.ToolResult{}, nil)
	_, tool = rec.StartTool(ctx, telemetry.Tool{Name: "bash", Meta: map[string]string{"source": "sandbox"}})
	tool.EndTool(telemetry.ToolResult{IsError: true}, nil)

	_, open := rec.StartRun(t.Context(), telemetry.Run{Agent: "researcher"})
	before := points(t, reader)
	if !slices.Contains(before, "antler.runs.active{gen_ai.agent.name=lead_agent} 1") {
		t.Errorf("active runs during the run: %q", before)
	}
	run.EndRun("completed", 1, modelUsage(), nil)
	_, chat = rec.StartModel(ctx, "default", nil)
	chat.EndModel(nil, errors.New("boom"))
	open.EndRun("error", 1, model.Usage{}, errors.New("boom"))

	want := []string{
		"antler.mcp.servers{antler.mcp.server=db,antler.mcp.state=failed} 1",
		"antler.mcp.servers{antler.mcp.server=web,antler.mcp.state=ready} 1",
		"antler.model.calls{error.type=_OTHER,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x} 1",
		"antler.model.calls{gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x} 1",
		"antler.runs.active{gen_ai.agent.name=lead_agent} 0",
		"antler.runs.active{gen_ai.agent.name=researcher} 0",
		"antler.runs{antler.run.outcome=completed,gen_ai.agent.name=lead_agent} 1",
		"antler.runs{antler.run.outcome=error,gen_ai.agent.name=researcher} 1",
		"antler.tool.calls{antler.tool.outcome=error,antler.tool.source=sandbox,gen_ai.tool.name=bash} 1",
		"antler.tool.calls{antler.tool.outcome=ok,antler.tool.source=mcp,gen_ai.tool.name=web_search} 1",
		"antler.tool.duration{antler.tool.outcome=error,antler.tool.source=sandbox,gen_ai.tool.name=bash} count=1",
		"antler.tool.duration{antler.tool.outcome=ok,antler.tool.source=mcp,gen_ai.tool.name=web_search} count=1",
		"gen_ai.client.operation.duration{error.type=_OTHER,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x} count=1",
		"gen_ai.client.operation.duration{gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x} count=1",
		"gen_ai.client.token.usage{gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x,gen_ai.token.type=input} count=1 sum=12",
		"gen_ai.client.token.usage{gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-x,gen_ai.token.type=output} count=1 sum=5",
	}
	if diff := cmp.Diff(want, points(t, reader)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestRecorder_nil is the cost of telemetry off: every method is safe on
// a nil Recorder and its nil spans.
func TestRecorder_nil(t *testing.T) {
	var rec *telemetry.Recorder
	ctx, run := rec.StartRun(t.Context(), telemetry.Run{})
	_, chat := rec.StartModel(ctx, "m", nil)
	chat.FirstToken()
	chat.EndModel(nil, nil)
	_, tool := rec.StartTool(ctx, telemetry.Tool{Name: "t"})
	tool.EndTool(telemetry.ToolResult{}, nil)
	run.EndRun("completed", 0, model.Usage{}, nil)
	if ctx != t.Context() {
		t.Error("a nil Recorder changed the context")
	}
	if rec.TracerProvider() != nil || rec.MeterProvider() != nil || rec.CaptureContent() {
		t.Error("a nil Recorder has providers")
	}
}
