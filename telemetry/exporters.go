package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The exporters are chosen from the OTEL_* variables with the values the
// contrib autoexport package takes (otlp, console, none; the OTLP
// protocols http/protobuf and grpc), but read through the injected
// environment lookup instead of the process's, so that a test or an
// embedding program decides what is exported (docs/design.md).

// exporterNames splits OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER (a
// comma-separated list) into its names; "none" anywhere turns the signal
// off. An empty value with an OTLP endpoint set is "otlp".
func exporterNames(get func(string) string, key, signal string) []string {
	v := get(key)
	if v == "" {
		if get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
			return nil
		}
		v = "otlp"
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "none" {
			return nil
		}
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// envSpanExporters builds the span exporters OTEL_TRACES_EXPORTER names.
func envSpanExporters(ctx context.Context, get func(string) string, stdout io.Writer) ([]sdktrace.SpanExporter, []string, error) {
	return envExporters(get, "OTEL_TRACES_EXPORTER", "TRACES", "/v1/traces",
		func() (sdktrace.SpanExporter, error) { return stdouttrace.New(stdouttrace.WithWriter(stdout)) },
		func(o otlpEnv) (sdktrace.SpanExporter, error) { return o.spanExporter(ctx) })
}

// envMetricReaders builds a periodic reader for each exporter
// OTEL_METRICS_EXPORTER names, at OTEL_METRIC_EXPORT_INTERVAL.
func envMetricReaders(ctx context.Context, get func(string) string, stdout io.Writer) ([]sdkmetric.Reader, []string, error) {
	var ropts []sdkmetric.PeriodicReaderOption
	if v := get("OTEL_METRIC_EXPORT_INTERVAL"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, nil, fmt.Errorf("telemetry: OTEL_METRIC_EXPORT_INTERVAL: %q is not a positive number of milliseconds", v)
		}
		ropts = append(ropts, sdkmetric.WithInterval(time.Duration(ms)*time.Millisecond))
	}
	exps, names, err := envExporters(get, "OTEL_METRICS_EXPORTER", "METRICS", "/v1/metrics",
		func() (sdkmetric.Exporter, error) { return stdoutmetric.New(stdoutmetric.WithWriter(stdout)) },
		func(o otlpEnv) (sdkmetric.Exporter, error) { return o.metricExporter(ctx) })
	if err != nil {
		return nil, nil, err
	}
	out := make([]sdkmetric.Reader, 0, len(exps))
	for _, e := range exps {
		out = append(out, sdkmetric.NewPeriodicReader(e, ropts...))
	}
	return out, names, nil
}

// envExporters builds one signal's exporters from the names in key:
// console through console, otlp through otlp with the signal's OTLP
// settings (path is its OTLP/HTTP path). It returns each exporter's
// description for the startup log beside it.
func envExporters[E any](get func(string) string, key, signal, path string,
	console func() (E, error), otlp func(otlpEnv) (E, error)) ([]E, []string, error) {
	var out []E
	var names []string
	for _, n := range exporterNames(get, key, signal) {
		var e E
		var err error
		name := strings.ToLower(signal) + ": " + n
		switch n {
		case "console":
			e, err = console()
		case "otlp":
			var o otlpEnv
			if o, err = readOTLPEnv(get, signal, path); err != nil {
				return nil, nil, err
			}
			name += " " + o.describe()
			e, err = otlp(o)
		default:
			return nil, nil, fmt.Errorf("telemetry: %s: %q is not an exporter Antler has (otlp, console, none)", key, n)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: %s exporter %s: %w", strings.ToLower(signal), n, err)
		}
		out = append(out, e)
		names = append(names, name)
	}
	return out, names, nil
}

// otlpEnv is one signal's OTLP settings from the environment.
type otlpEnv struct {
	protocol string // "http/protobuf" or "grpc"
	endpoint string // a URL; "" is the exporter's default
	headers  map[string]string
	timeout  time.Duration // 0 is the exporter's default (10 s)
}

// readOTLPEnv reads OTEL_EXPORTER_OTLP_{signal_}* with the signal's
// variable winning over the general one. The general endpoint gets path
// appended (for OTLP/HTTP), the signal's is used as it is.
func readOTLPEnv(get func(string) string, signal, path string) (otlpEnv, error) {
	pick := func(name string) (string, string) {
		k := "OTEL_EXPORTER_OTLP_" + signal + "_" + name
		if v := get(k); v != "" {
			return v, k
		}
		k = "OTEL_EXPORTER_OTLP_" + name
		return get(k), k
	}
	var o otlpEnv
	proto, key := pick("PROTOCOL")
	switch proto {
	case "", "http/protobuf":
		o.protocol = "http/protobuf"
	case "grpc":
		o.protocol = "grpc"
	default:
		return o, fmt.Errorf("telemetry: %s: %q is not a protocol Antler speaks (http/protobuf, grpc)", key, proto)
	}
	if v := get("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); v != "" {
		o.endpoint = v
	} else if v := get("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		o.endpoint = v
		if o.protocol != "grpc" {
			o.endpoint = strings.TrimRight(v, "/") + path
		}
	}
	if o.endpoint != "" {
		if u, err := url.Parse(o.endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			return o, fmt.Errorf("telemetry: OTLP %s endpoint %q is not a URL (scheme://host:port)", strings.ToLower(signal), o.endpoint)
		}
	}
	o.headers = map[string]string{}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + signal + "_HEADERS"} {
		if err := parseHeaders(get(k), o.headers); err != nil {
			return o, fmt.Errorf("telemetry: %s: %w", k, err)
		}
	}
	if v, key := pick("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return o, fmt.Errorf("telemetry: %s: %q is not a positive number of milliseconds", key, v)
		}
		o.timeout = time.Duration(ms) * time.Millisecond
	}
	return o, nil
}

// parseHeaders adds the headers of v, "key=value,key2=value2" with
// percent-encoded values, to into.
func parseHeaders(v string, into map[string]string) error {
	for _, kv := range strings.Split(v, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", kv)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return fmt.Errorf("the value of %s: %w", k, err)
		}
		into[k] = dec
	}
	return nil
}

// describe is the protocol and endpoint, for the startup log (headers,
// which may hold keys, are left out).
func (o otlpEnv) describe() string {
	if o.endpoint == "" {
		return o.protocol
	}
	return o.protocol + " " + o.endpoint
}

func (o otlpEnv) spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if o.protocol == "grpc" {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithHeaders(o.headers)}
		if o.endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(o.endpoint))
		}
		if o.timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(o.timeout))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithHeaders(o.headers)}
	if o.endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(o.endpoint))
	}
	if o.timeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(o.timeout))
	}
	return otlptracehttp.New(ctx, opts...)
}

func (o otlpEnv) metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	if o.protocol == "grpc" {
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithHeaders(o.headers)}
		if o.endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(o.endpoint))
		}
		if o.timeout > 0 {
			opts = append(opts, otlpmetricgrpc.WithTimeout(o.timeout))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithHeaders(o.headers)}
	if o.endpoint != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(o.endpoint))
	}
	if o.timeout > 0 {
		opts = append(opts, otlpmetrichttp.WithTimeout(o.timeout))
	}
	return otlpmetrichttp.New(ctx, opts...)
}
