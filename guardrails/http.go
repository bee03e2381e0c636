package guardrails

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/antlerhq/antler/config"
)

// HTTPUse is the use string of the HTTP provider.
const HTTPUse = "antler:http"

// HTTPOptions configure an HTTPProvider.
type HTTPOptions struct {
	// URL is the http or https endpoint the request is POSTed to; required.
	URL string
	// Headers are sent with every request (an Authorization token, say).
	Headers map[string]string
	// Timeout bounds one evaluation, connection included; zero means
	// 10s.
	Timeout time.Duration
	// MaxResponseBytes bounds the response body; zero means
	// 64 KiB.
	MaxResponseBytes int
	// Client is the HTTP client (nil: a client of its own). Its Timeout is
	// not used; redirects are never followed.
	Client *http.Client
}

// HTTPProvider POSTs the request as JSON to a policy service and reads
// its answer, an OAP decision object (bare or under "decision"), as
// APort-style services return it. A transport error, a status other than
// 2xx, a timeout, a body over the bound or a document that is not a
// decision is an evaluation error.
type HTTPProvider struct {
	opts   HTTPOptions // immutable after NewHTTPProvider
	client *http.Client
}

// NewHTTPProvider returns the provider; a URL that is not http or https
// is an error.
func NewHTTPProvider(opts HTTPOptions) (*HTTPProvider, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url must be an http or https URL, got %q", opts.URL)
	}
	opts.Headers = maps.Clone(opts.Headers)
	if opts.Timeout <= 0 {
		opts.Timeout = defaultProviderTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = defaultMaxDecisionBytes
	}
	base := opts.Client
	if base == nil {
		base = &http.Client{}
	}
	client := *base
	client.Timeout = 0 // the per-evaluation context bounds it
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &HTTPProvider{opts: opts, client: &client}, nil
}

// Name implements Provider.
func (p *HTTPProvider) Name() string { return "http" }

// Evaluate implements Provider.
func (p *HTTPProvider) Evaluate(ctx context.Context, req *Request) (Decision, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Decision{}, err
	}
	callCtx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(callCtx, http.MethodPost, p.opts.URL, bytes.NewReader(body))
	if err != nil {
		return Decision{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	for k, v := range p.opts.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return Decision{}, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return Decision{}, fmt.Errorf("guardrail service %s timed out after %s", p.opts.URL, p.opts.Timeout)
		}
		return Decision{}, fmt.Errorf("guardrail service %s: %w", p.opts.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(p.opts.MaxResponseBytes)+1))
	if err != nil {
		if ctx.Err() != nil {
			return Decision{}, ctx.Err()
		}
		return Decision{}, fmt.Errorf("guardrail service %s: reading the answer: %w", p.opts.URL, err)
	}
	if len(data) > p.opts.MaxResponseBytes {
		return Decision{}, fmt.Errorf("guardrail service %s answered more than %d bytes", p.opts.URL, p.opts.MaxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Decision{}, fmt.Errorf("guardrail service %s answered %s: %s", p.opts.URL, resp.Status, clip(string(data), 300))
	}
	d, err := parseDecision(data)
	if err != nil {
		return Decision{}, fmt.Errorf("guardrail service %s: %w", p.opts.URL, err)
	}
	return d, nil
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// httpFactory reads url, headers, timeout and max_response_bytes.
func httpFactory(env Env, spec *config.GuardrailProvider) (Provider, error) {
	s := NewSettings(env, spec)
	opts := HTTPOptions{
		URL:              s.String("url"),
		Headers:          s.StringMap("headers"),
		Timeout:          s.Seconds("timeout", defaultProviderTimeout, maxProviderTimeout),
		MaxResponseBytes: s.Bytes("max_response_bytes", defaultMaxDecisionBytes, maxDecisionBytes),
	}
	if err := s.Done(); err != nil {
		return nil, err
	}
	p, err := NewHTTPProvider(opts)
	if err != nil {
		s.fail("url", "%v", err)
		return nil, s.Done()
	}
	return p, nil
}
