package telemetry_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/telemetry"
	"github.com/antlerhq/antler/telemetry/telemetrytest"
)

// envOf is a Getenv over m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// recordRun records one run with a model call through p and shuts p
// down, which flushes the spans.
func recordRun(t *testing.T, p *telemetry.Provider) {
	t.Helper()
	rec := p.Recorder(nil, nil)
	ctx, run := rec.StartRun(t.Context(), telemetry.Run{ThreadID: "th1", RunID: "r1"})
	_, chat := rec.StartModel(ctx, "default", nil)
	chat.EndModel(nil, nil)
	run.EndRun("completed", 1, modelUsage(), nil)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestStart_off(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"nothing set", nil},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}},
		{"none wins in a list", map[string]string{"OTEL_TRACES_EXPORTER": "console,none"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p, err := telemetry.Start(t.Context(), telemetry.ProviderOptions{Getenv: envOf(tc.env), Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			if p.Enabled() || p.Recorder(nil, nil) != nil || len(p.Exporters) != 0 {
				t.Errorf("Start() = enabled %v, exporters %q; want nothing", p.Enabled(), p.Exporters)
			}
			if err := p.Shutdown(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestStart_console(t *testing.T) {
	var out bytes.Buffer
	p, err := telemetry.Start(t.Context(), telemetry.ProviderOptions{Stdout: &out,
		Getenv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console"})})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"traces: console"}, p.Exporters); diff != "" {
		t.Errorf("Exporters (-want +got):\n%s", diff)
	}
	recordRun(t, p)
	for _, want := range []string{`"Name":"invoke_agent lead_agent"`, `"Name":"chat default"`, `"Value":"antler"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console output has no %s:\n%s", want, out.String())
		}
	}
	if err := p.Shutdown(t.Context()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

func TestStart_otlpEndpoint(t *testing.T) {
	recv := telemetrytest.NewReceiver(t)
	p, err := telemetry.Start(t.Context(), telemetry.ProviderOptions{ServiceVersion: "1.2.3", Getenv: envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-team=agents,x-note=a%20b",
		"OTEL_SERVICE_NAME":           "antler-test",
	})})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"traces: otlp http/protobuf " + recv.URL + "/v1/traces", "metrics: otlp http/protobuf " + recv.URL + "/v1/metrics"}
	if diff := cmp.Diff(want, p.Exporters); diff != "" {
		t.Errorf("Exporters (-want +got):\n%s", diff)
	}
	recordRun(t, p)
	var names []string
	for _, s := range recv.Spans() {
		names = append(names, s.Name)
		if s.ServiceName != "antler-test" {
			t.Errorf("span %q: service.name = %q, want antler-test", s.Name, s.ServiceName)
		}
	}
	if diff := cmp.Diff([]string{"chat default", "invoke_agent lead_agent"}, names); diff != "" {
		t.Errorf("received spans (-want +got):\n%s", diff)
	}
	h := recv.Headers()
	if len(h) == 0 || h[0].Get("x-team") != "agents" || h[0].Get("x-note") != "a b" {
		t.Errorf("export headers = %v, want x-team and x-note from OTEL_EXPORTER_OTLP_HEADERS", h)
	}
}

// TestStart_tracingSection maps DeerFlow's tracing section onto OTLP:
// Langfuse with basic authentication by its keys, LangSmith with
// x-api-key and the project.
func TestStart_tracingSection(t *testing.T) {
	tests := []struct {
		name     string
		tracing  config.Tracing
		env      map[string]string
		wantPath string
		want     map[string]string
	}{
		{"langfuse keys", config.Tracing{Langfuse: config.LangfuseTracing{Enabled: true, PublicKey: "pk", SecretKey: "sk"}}, nil,
			"/api/public/otel/v1/traces", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("pk:sk"))}},
		{"langfuse from DeerFlow's variables", config.Tracing{}, map[string]string{"LANGFUSE_TRACING": "true",
			"LANGFUSE_PUBLIC_KEY": "pk2", "LANGFUSE_SECRET_KEY": "sk2"},
			"/api/public/otel/v1/traces", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("pk2:sk2"))}},
		{"langsmith", config.Tracing{LangSmith: config.LangSmithTracing{Enabled: true, APIKey: "ls-key", Project: "proj"}}, nil,
			"/otel/v1/traces", map[string]string{"X-Api-Key": "ls-key", "Langsmith-Project": "proj"}},
		{"langsmith default project", config.Tracing{}, map[string]string{"LANGSMITH_TRACING": "true", "LANGSMITH_API_KEY": "k"},
			"/otel/v1/traces", map[string]string{"X-Api-Key": "k", "Langsmith-Project": "deer-flow"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recv := telemetrytest.NewReceiver(t)
			tr := tc.tracing
			tr.Langfuse.Host, tr.LangSmith.Endpoint = recv.URL, recv.URL
			p, err := telemetry.Start(t.Context(), telemetry.ProviderOptions{Tracing: tr, Getenv: envOf(tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			recordRun(t, p)
			h := recv.Headers()
			if len(h) == 0 {
				t.Fatal("the receiver got no export")
			}
			if got := h[0].Get(telemetrytest.PathHeader); got != tc.wantPath {
				t.Errorf("path = %q, want %q", got, tc.wantPath)
			}
			for k, v := range tc.want {
				if got := h[0].Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if len(recv.Spans()) != 2 {
				t.Errorf("received %d spans, want 2", len(recv.Spans()))
			}
		})
	}
}

func TestStart_errors(t *testing.T) {
	tests := []struct {
		name    string
		tracing config.Tracing
		env     map[string]string
		want    string
	}{
		{"unknown traces exporter", config.Tracing{}, map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"},
		{"unknown metrics exporter", config.Tracing{}, map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, "OTEL_METRICS_EXPORTER"},
		{"unknown protocol", config.Tracing{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"bad timeout", config.Tracing{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "soon"}, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{"bad headers", config.Tracing{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{"bad endpoint", config.Tracing{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost"}, "endpoint"},
		{"bad interval", config.Tracing{}, map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "-1"}, "OTEL_METRIC_EXPORT_INTERVAL"},
		{"langfuse without secret", config.Tracing{Langfuse: config.LangfuseTracing{Enabled: true, PublicKey: "pk"}}, nil, "tracing.langfuse.secret_key"},
		{"langsmith without key", config.Tracing{LangSmith: config.LangSmithTracing{Enabled: true}}, nil, "tracing.langsmith.api_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := telemetry.Start(t.Context(), telemetry.ProviderOptions{Tracing: tc.tracing, Getenv: envOf(tc.env)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start() error = %v, want one naming %s", err, tc.want)
			}
		})
	}
}
