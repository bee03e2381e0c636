package telemetry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/antlerhq/antler/config"
)

// ProviderOptions configure Start. Every zero value is documented.
type ProviderOptions struct {
	// Tracing is the configuration's tracing section; its empty keys are
	// read from DeerFlow's environment variables (LANGSMITH_*, LANGFUSE_*).
	Tracing config.Tracing
	// ServiceVersion is service.version; "" leaves it out.
	ServiceVersion string
	// LookupEnv reads the environment; nil means os.LookupEnv. The
	// exporters autoexport builds read the process environment
	// themselves (OTEL_EXPORTER_OTLP_*).
	LookupEnv func(string) (string, bool)
	// Logger receives the export errors the SDK reports; nil discards.
	Logger *slog.Logger
}

// Provider owns the SDK's tracer and meter providers and their exporters.
// Start it once per process and Shutdown it before the process exits
// (which flushes the spans not yet exported).
type Provider struct {
	tp      *sdktrace.TracerProvider // nil with tracing off
	mp      *sdkmetric.MeterProvider // nil with metrics off
	capture bool
	// Exporters names what is exported where ("traces: otlp", ...), for
	// doctor and the startup log. Secrets are never in it.
	Exporters []string
}

// Start builds the providers the environment and o ask for:
//
//   - traces when OTEL_TRACES_EXPORTER is set (otlp, console, none; as
//     autoexport reads it), when an OTLP endpoint is set
//     (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
//     and to LangSmith and Langfuse when the tracing section (or DeerFlow's
//     variables) enables them;
//   - metrics when OTEL_METRICS_EXPORTER or an OTLP endpoint
//     (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
//     is set.
//
// OTEL_SDK_DISABLED=true turns both off. With neither, the Provider's
// providers are nil and nothing is recorded. An enabled LangSmith or
// Langfuse without its keys is an error naming the key.
func Start(ctx context.Context, o ProviderOptions) (*Provider, error) {
	env := o.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	get := func(k string) string { v, _ := env(k); return strings.TrimSpace(v) }
	p := &Provider{capture: truthy(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"))}
	if truthy(get("OTEL_SDK_DISABLED")) {
		return p, nil
	}
	res, err := newResource(ctx, o.ServiceVersion)
	if err != nil {
		return nil, err
	}
	exporters, names, err := spanExporters(ctx, o.Tracing, get)
	if err != nil {
		return nil, err
	}
	if len(exporters) > 0 {
		topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, e := range exporters {
			topts = append(topts, sdktrace.WithBatcher(e))
		}
		p.tp = sdktrace.NewTracerProvider(topts...)
		p.Exporters = append(p.Exporters, names...)
	}
	if get("OTEL_METRICS_EXPORTER") != "" || get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" {
		reader, err := autoexport.NewMetricReader(ctx)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("telemetry: metrics exporter (OTEL_METRICS_EXPORTER): %w", err), p.Shutdown(ctx))
		}
		if !autoexport.IsNoneMetricReader(reader) {
			p.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader))
			p.Exporters = append(p.Exporters, "metrics: "+cmpOr(get("OTEL_METRICS_EXPORTER"), "otlp"))
		}
	}
	return p, nil
}

// spanExporters returns the span exporters asked for and their names.
func spanExporters(ctx context.Context, t config.Tracing, get func(string) string) ([]sdktrace.SpanExporter, []string, error) {
	var out []sdktrace.SpanExporter
	var names []string
	if get("OTEL_TRACES_EXPORTER") != "" || get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		e, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: traces exporter (OTEL_TRACES_EXPORTER): %w", err)
		}
		if !autoexport.IsNoneSpanExporter(e) {
			out = append(out, e)
			names = append(names, "traces: "+cmpOr(get("OTEL_TRACES_EXPORTER"), "otlp"))
		}
	}
	for _, svc := range []func(config.Tracing, func(string) string) (*otlpTarget, error){langSmith, langfuse} {
		target, err := svc(t, get)
		if err != nil {
			return nil, nil, err
		}
		if target == nil {
			continue
		}
		e, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target.url), otlptracehttp.WithHeaders(target.headers))
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: %s exporter: %w", target.name, err)
		}
		out = append(out, e)
		names = append(names, "traces: "+target.name+" "+target.url)
	}
	return out, names, nil
}

// otlpTarget is an OTLP/HTTP traces endpoint with its headers.
type otlpTarget struct {
	name, url string
	headers   map[string]string
}

// langSmith maps the langsmith keys onto LangSmith's OTLP endpoint; nil
// when it is not enabled.
func langSmith(t config.Tracing, get func(string) string) (*otlpTarget, error) {
	c := t.LangSmith
	enabled := c.Enabled || truthy(cmpOr(get("LANGSMITH_TRACING"), get("LANGCHAIN_TRACING_V2"), get("LANGCHAIN_TRACING")))
	if !enabled {
		return nil, nil
	}
	key := cmpOr(c.APIKey, get("LANGSMITH_API_KEY"), get("LANGCHAIN_API_KEY"))
	if key == "" {
		return nil, errors.New("telemetry: LangSmith tracing is enabled but tracing.langsmith.api_key (LANGSMITH_API_KEY) is not set")
	}
	project := cmpOr(c.Project, get("LANGSMITH_PROJECT"), get("LANGCHAIN_PROJECT"), "deer-flow")
	base := cmpOr(c.Endpoint, get("LANGSMITH_ENDPOINT"), get("LANGCHAIN_ENDPOINT"), "https://api.smith.langchain.com")
	return &otlpTarget{name: "langsmith", url: strings.TrimRight(base, "/") + "/otel/v1/traces",
		headers: map[string]string{"x-api-key": key, "Langsmith-Project": project}}, nil
}

// langfuse maps the langfuse keys onto Langfuse's OTLP endpoint; nil
// when it is not enabled.
func langfuse(t config.Tracing, get func(string) string) (*otlpTarget, error) {
	c := t.Langfuse
	if !c.Enabled && !truthy(get("LANGFUSE_TRACING")) {
		return nil, nil
	}
	pub, sec := cmpOr(c.PublicKey, get("LANGFUSE_PUBLIC_KEY")), cmpOr(c.SecretKey, get("LANGFUSE_SECRET_KEY"))
	var missing []string
	if pub == "" {
		missing = append(missing, "tracing.langfuse.public_key (LANGFUSE_PUBLIC_KEY)")
	}
	if sec == "" {
		missing = append(missing, "tracing.langfuse.secret_key (LANGFUSE_SECRET_KEY)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("telemetry: Langfuse tracing is enabled but %s not set", strings.Join(missing, " and "))
	}
	host := cmpOr(c.Host, get("LANGFUSE_BASE_URL"), "https://cloud.langfuse.com")
	auth := base64.StdEncoding.EncodeToString([]byte(pub + ":" + sec))
	return &otlpTarget{name: "langfuse", url: strings.TrimRight(host, "/") + "/api/public/otel/v1/traces",
		headers: map[string]string{"Authorization": "Basic " + auth}}, nil
}

func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "antler")}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins
	// over the defaults.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// Enabled reports whether anything is exported.
func (p *Provider) Enabled() bool { return p != nil && (p.tp != nil || p.mp != nil) }

// Recorder returns the Recorder of p's providers (nil when nothing is
// exported).
func (p *Provider) Recorder(describeModel func(string) (string, string), log *slog.Logger) *Recorder {
	if !p.Enabled() {
		return nil
	}
	o := Options{CaptureContent: p.capture, DescribeModel: describeModel, Logger: log}
	if p.tp != nil {
		o.TracerProvider = p.tp
	}
	if p.mp != nil {
		o.MeterProvider = p.mp
	}
	return New(o)
}

// Shutdown flushes and stops the exporters. It is safe on a nil or an
// empty Provider and more than once.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.tp != nil {
		errs = append(errs, p.tp.Shutdown(ctx))
	}
	if p.mp != nil {
		errs = append(errs, p.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.ToLower(v))
	return err == nil && b || strings.EqualFold(v, "yes") || strings.EqualFold(v, "on")
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
