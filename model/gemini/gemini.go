package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/antlerhq/antler/model"
)

// APIVersion is the Gemini API version requested; v1beta carries
// function calling with JSON Schemas and thinking settings.
const APIVersion = "v1beta"

// defaultRetries is how often a failed call is retried when
// Options.MaxRetries is 0, as for the other providers.
const defaultRetries = 2

// Thinking is Gemini's thinking configuration (thinking_budget,
// include_thoughts, thinking_level). A nil field leaves the model's own
// default.
type Thinking struct {
	// Budget is the thinking token budget: 0 turns thinking off, -1 lets
	// the model decide.
	Budget *int
	// IncludeThoughts asks for thought summaries, streamed as reasoning.
	IncludeThoughts *bool
	// Level is Gemini 3's thinking level ("low", "high", ...).
	Level string
}

// Options configures a Model. Model is required; every other zero value
// is usable.
type Options struct {
	// Name is the models[] entry name, used in error messages.
	Name string
	// ConfigKey is where the entry lives in config.yaml ("models[3]"),
	// used in the missing-key hint; "" names it by Name instead.
	ConfigKey string
	// Model is the Gemini model id ("gemini-2.5-pro").
	Model string

	// APIKey is the Gemini API key. "" = GOOGLE_API_KEY, then
	// GEMINI_API_KEY (the order of Google's SDKs).
	APIKey string
	// BaseURL is the API root without the version. "" =
	// GOOGLE_GEMINI_BASE_URL, then DefaultBaseURL.
	BaseURL string

	// MaxTokens, when positive, caps the answer (maxOutputTokens). A
	// request's own MaxTokens takes precedence.
	MaxTokens int
	// Temperature, TopP and TopK, when non-nil, are sent with every
	// request; a request's Temperature takes precedence.
	Temperature, TopP, TopK *float64
	// Thinking is sent with every request; when SupportsThinking is set,
	// ThinkingOn (a request that asks for thinking) or ThinkingOff (one
	// that does not) overrides its set fields.
	Thinking, ThinkingOn, ThinkingOff Thinking
	// SupportsThinking says the model honours ThinkingOn.
	SupportsThinking bool
	// Timeout bounds each HTTP attempt; 0 = no limit beyond ctx.
	Timeout time.Duration
	// MaxRetries is how often 408/429/5xx answers are retried; 0 = 2,
	// negative = never.
	MaxRetries int
	// Headers are added to every request.
	Headers map[string]string

	// HTTPClient replaces http.DefaultClient (tests).
	HTTPClient *http.Client
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Getenv looks up environment variables; nil = os.Getenv.
	Getenv func(string) string
}

// Model is a Gemini chat model. It is safe for concurrent use; all
// fields are immutable after New.
type Model struct {
	opts    Options
	client  *client
	baseURL string
	keyErr  error
	logger  *slog.Logger
}

var _ model.ChatModel = (*Model)(nil)

// New returns a Model for opts. It fails only for an unusable base URL
// or a missing Model; a missing API key is reported by Generate.
func New(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, errors.New("model: the model id is empty (set model)")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Model{opts: opts, logger: opts.Logger}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if base := cmp.Or(opts.BaseURL, getenv("GOOGLE_GEMINI_BASE_URL")); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("base_url %q is not an http(s) URL", base)
		}
		m.baseURL = strings.TrimRight(base, "/") + "/"
	}
	key := cmp.Or(opts.APIKey, getenv("GOOGLE_API_KEY"), getenv("GEMINI_API_KEY"))
	if key == "" {
		where := cmp.Or(opts.ConfigKey, fmt.Sprintf("models[] entry %q", opts.Name))
		m.keyErr = &model.ProviderError{Model: opts.Name, Provider: "gemini",
			Message: "no API key", Hint: "set GEMINI_API_KEY or gemini_api_key in " + where}
		return m, nil
	}
	m.client = m.newClient(key)
	return m, nil
}

func (m *Model) newClient(key string) *client {
	c := &client{http: m.opts.HTTPClient, baseURL: cmp.Or(m.baseURL, DefaultBaseURL), key: key,
		headers: http.Header{}, timeout: m.opts.Timeout, retries: m.opts.MaxRetries}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	for k, v := range m.opts.Headers {
		c.headers.Set(k, v)
	}
	if c.retries == 0 {
		c.retries = defaultRetries
	}
	c.retries = max(c.retries, 0)
	return c
}

// BaseURL returns the API root the model talks to ("" = DefaultBaseURL).
func (m *Model) BaseURL() string { return m.baseURL }

// Generate streams the model's answer to req. See [model.ChatModel].
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if m.keyErr != nil {
			yield(model.Event{}, m.keyErr)
			return
		}
		body, err := m.request(req)
		if err != nil {
			yield(model.Event{}, m.wrap(ctx, err))
			return
		}
		start := time.Now()
		var asm assembler
		for chunk, err := range m.client.stream(ctx, m.opts.Model, body) {
			if err != nil {
				yield(model.Event{}, m.wrap(ctx, err))
				return
			}
			for _, ev := range asm.add(chunk) {
				if !yield(ev, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(model.Event{}, err)
			return
		}
		resp, err := asm.response()
		if err != nil {
			yield(model.Event{}, m.wrap(ctx, err))
			return
		}
		m.logger.Debug("model call done", "model", m.opts.Name, "finish", resp.FinishReason,
			"tool_calls", len(resp.Message.ToolCalls), "elapsed", time.Since(start))
		yield(model.Event{Response: resp}, nil)
	}
}

// wrap turns an API or transport error into a *model.ProviderError;
// cancellation is returned as the context's own error.
func (m *Model) wrap(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	pe := &model.ProviderError{Model: m.opts.Name, Provider: "gemini", Err: err}
	apiErr := &apiError{}
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &apiErr):
		pe.StatusCode = apiErr.Code
		pe.Message = cmp.Or(apiErr.Message, apiErr.Status)
		pe.Code = apiErr.Status
		switch {
		case apiErr.Code == http.StatusUnauthorized || apiErr.Code == http.StatusForbidden ||
			strings.Contains(apiErr.Message, "API key"):
			pe.Hint = "check gemini_api_key or GEMINI_API_KEY"
		case apiErr.Code == http.StatusNotFound:
			pe.Hint = fmt.Sprintf("check model %q", m.opts.Model)
		}
	case errors.As(err, &netErr), errors.As(err, &opErr):
		pe.Message = fmt.Sprintf("cannot reach %s: %v", cmp.Or(m.baseURL, "the Gemini API"), err)
		pe.Hint = "check base_url or GOOGLE_GEMINI_BASE_URL"
	default:
		pe.Message = err.Error()
	}
	return pe
}
