package telemetry

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// Getenv reads the environment (the OTEL_* variables and DeerFlow's);
	// nil means os.Getenv. The OTLP exporters still read the settings
	// Antler does not pass them (certificates, compression) from the
	// process environment.
	Getenv func(string) string
	// Stdout receives the console exporters' output; nil means os.Stdout.
	Stdout io.Writer
	// FlushTimeout bounds Shutdown's flush of the spans and metrics not
	// yet exported; 0 means 5 seconds.
	FlushTimeout time.Duration
}

// defaultFlushTimeout is ProviderOptions.FlushTimeout's zero value.
const defaultFlushTimeout = 5 * time.Second

// Provider owns the SDK's tracer and meter providers and their exporters.
// Start it once per process and Shutdown it before the process exits
// (which flushes the spans not yet exported).
type Provider struct {
	tp           *sdktrace.TracerProvider // nil with tracing off
	mp           *sdkmetric.MeterProvider // nil with metrics off
	capture      bool
	flushTimeout time.Duration
	shutdown     sync.Once
	shutdownErr  error
	// Exporters names what is exported where ("traces: otlp ...", ...),
	// for doctor and the startup log. Secrets are never in it.
	Exporters []string
}

// Start builds the providers the environment and o ask for:
//
//   - traces to each exporter OTEL_TRACES_EXPORTER names (otlp, console,
//     none), to OTLP when only an endpoint is set
//     (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
//     and to LangSmith and Langfuse when the tracing section (or DeerFlow's
//     variables) enables them;
//   - metrics to each exporter OTEL_METRICS_EXPORTER names, or to OTLP
//     when only an endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT,
//     OTEL_EXPORTER_OTLP_METRICS_ENDPOINT).
//
// OTEL_SDK_DISABLED=true turns both off. With neither, the Provider's
// providers are nil and nothing is recorded. A value Antler does not
// know, or an enabled LangSmith or Langfuse without its keys, is an error
// naming the variable or key.
func Start(ctx context.Context, o ProviderOptions) (*Provider, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	stdout := o.Stdout
	if stdout == nil {
		stdout = os.Stdout
	}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	p := &Provider{capture: truthy(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")),
		flushTimeout: cmp.Or(o.FlushTimeout, defaultFlushTimeout)}
	if truthy(get("OTEL_SDK_DISABLED")) {
		return p, nil
	}
	exporters, names, err := spanExporters(ctx, o.Tracing, get, stdout)
	if err != nil {
		return nil, err
	}
	readers, rnames, err := envMetricReaders(ctx, get, stdout)
	if err != nil {
		return nil, errors.Join(err, shutdownAll(ctx, exporters))
	}
	if len(exporters) == 0 && len(readers) == 0 {
		return p, nil
	}
	res := newResource(ctx, o.ServiceVersion, get)
	if len(exporters) > 0 {
		topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, e := range exporters {
			topts = append(topts, sdktrace.WithBatcher(e))
		}
		p.tp = sdktrace.NewTracerProvider(topts...)
		p.Exporters = append(p.Exporters, names...)
	}
	if len(readers) > 0 {
		mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, r := range readers {
			mopts = append(mopts, sdkmetric.WithReader(r))
		}
		p.mp = sdkmetric.NewMeterProvider(mopts...)
		p.Exporters = append(p.Exporters, rnames...)
	}
	return p, nil
}

// shutdownAll shuts the exporters of a Start that failed half way.
func shutdownAll(ctx context.Context, exporters []sdktrace.SpanExporter) error {
	var errs []error
	for _, e := range exporters {
		errs = append(errs, e.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// spanExporters returns the span exporters asked for and their names.
func spanExporters(ctx context.Context, t config.Tracing, get func(string) string, stdout io.Writer) ([]sdktrace.SpanExporter, []string, error) {
	out, names, err := envSpanExporters(ctx, get, stdout)
	if err != nil {
		return nil, nil, err
	}
	for _, svc := range []func(config.Tracing, func(string) string) (*otlpTarget, error){langSmith, langfuse} {
		target, err := svc(t, get)
		if err != nil {
			return nil, nil, errors.Join(err, shutdownAll(ctx, out))
		}
		if target == nil {
			continue
		}
		e, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target.url), otlptracehttp.WithHeaders(target.headers))
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("telemetry: %s exporter: %w", target.name, err), shutdownAll(ctx, out))
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

// newResource is the resource of every span and metric: service.name
// antler (OTEL_SERVICE_NAME overrides it), service.version, the SDK's
// attributes and OTEL_RESOURCE_ATTRIBUTES, read through get.
func newResource(ctx context.Context, version string, get func(string) string) *resource.Resource {
	attrs := []attribute.KeyValue{attribute.String("service.name", cmpOr(get("OTEL_SERVICE_NAME"), "antler"))}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	for _, kv := range strings.Split(get("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" || k == "service.name" && get("OTEL_SERVICE_NAME") != "" {
			continue
		}
		if dec, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			attrs = append(attrs, attribute.String(k, dec))
		}
	}
	// Merging the SDK's attributes cannot conflict with these (no schema
	// URL on either), so the error is never set.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return resource.NewSchemaless(attrs...)
	}
	return res
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

// Shutdown flushes and stops the exporters, waiting at most the
// FlushTimeout (or ctx's end, if sooner). It is safe on a nil or an empty
// Provider and more than once.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil || p.tp == nil && p.mp == nil {
		return nil
	}
	p.shutdown.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, cmp.Or(p.flushTimeout, defaultFlushTimeout))
		defer cancel()
		var errs []error
		if p.tp != nil {
			errs = append(errs, p.tp.Shutdown(ctx))
		}
		if p.mp != nil {
			errs = append(errs, p.mp.Shutdown(ctx))
		}
		if err := errors.Join(errs...); err != nil {
			p.shutdownErr = fmt.Errorf("telemetry: flush: %w", err)
		}
	})
	return p.shutdownErr
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
