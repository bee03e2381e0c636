// Package telemetrytest has an OTLP/HTTP traces receiver for tests: a
// local server that decodes the protobuf ExportTraceServiceRequest the
// OTLP exporters send and keeps the spans it carried.
package telemetrytest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// maxRequestBytes bounds one export request the receiver reads.
const maxRequestBytes = 8 << 20

// maxSpans bounds the spans the receiver keeps; later ones are dropped.
const maxSpans = 10000

// Span is one received span, its ids in hex.
type Span struct {
	Name            string
	TraceID, SpanID string
	ParentSpanID    string // "" for a root span
	Attributes      map[string]string
	ServiceName     string
}

// Receiver is a running OTLP/HTTP receiver of traces.
type Receiver struct {
	// URL is the server's base URL, OTEL_EXPORTER_OTLP_ENDPOINT's value.
	URL string

	mu      sync.Mutex
	spans   []Span
	headers []http.Header
}

// NewReceiver starts a receiver on 127.0.0.1, closed when t ends. It
// takes a POST of traces on any path ending in /v1/traces (the OTLP path,
// and LangSmith's and Langfuse's under their prefixes) and drops metrics
// posted to /v1/metrics; anything else is 404.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v1/traces"):
			r.serveTraces(w, req)
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v1/metrics"):
			// Metrics are taken and dropped, so that a run with an
			// endpoint set for both signals exports without errors.
			_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, maxRequestBytes))
			out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serveTraces(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	h := req.Header.Clone()
	h.Set(PathHeader, req.URL.Path)
	r.headers = append(r.headers, h)
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if len(r.spans) >= maxSpans {
					break
				}
				attrs := map[string]string{}
				for _, kv := range s.GetAttributes() {
					attrs[kv.GetKey()] = anyValue(kv.GetValue())
				}
				r.spans = append(r.spans, Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Attributes: attrs, ServiceName: service})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans returns a copy of the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// PathHeader is the pseudo-header Headers adds with each request's path.
const PathHeader = "X-Receiver-Path"

// Headers returns the headers of each export request received so far,
// with its path as PathHeader.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// anyValue renders an attribute value as text: strings as they are,
// numbers and booleans in Go's format, arrays as their elements joined
// by ",".
func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyValue(e))
		}
		return strings.Join(parts, ",")
	}
	return ""
}
