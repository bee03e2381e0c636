package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/antlerhq/antler/model"
)

// DefaultBaseURL is Anthropic's API root (the SDK appends /v1/messages).
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the completion limit sent when neither the options
// nor the request set one; the Messages API requires a value.
const DefaultMaxTokens = 4096

// Options configures a Model. Model is required; every other zero value
// is usable.
type Options struct {
	// Name is the models[] entry name, used in error messages.
	Name string
	// ConfigKey is where the entry lives in config.yaml ("models[2]"),
	// used in the missing-key hint; "" names it by Name instead.
	ConfigKey string
	// Model is Anthropic's model id ("claude-sonnet-4-5").
	Model string

	// APIKey is the x-api-key credential. "" = ANTHROPIC_API_KEY, then
	// ANTHROPIC_AUTH_TOKEN (sent as a bearer token).
	APIKey string
	// BaseURL is the API root, with or without a trailing /v1 (the SDK
	// adds /v1 itself, so one given here is dropped). "" =
	// ANTHROPIC_BASE_URL, then DefaultBaseURL.
	BaseURL string

	// MaxTokens caps the completion; 0 = DefaultMaxTokens. A request's
	// own MaxTokens takes precedence.
	MaxTokens int
	// Temperature, when non-nil, is sent unless the request sets its own.
	Temperature *float64
	// Timeout bounds each HTTP attempt; 0 = no limit beyond ctx.
	Timeout time.Duration
	// MaxRetries: 0 = the SDK's default (2), negative = never retry.
	MaxRetries int
	// ExtraBody is merged into every request body.
	ExtraBody map[string]any
	// ThinkingBody is merged into the body when a request asks for
	// thinking and SupportsThinking is set (when_thinking_enabled, e.g.
	// {"thinking": {"type": "enabled", "budget_tokens": 2048}}).
	ThinkingBody map[string]any
	// NoThinkingBody is merged when thinking is not asked for.
	NoThinkingBody map[string]any
	// SupportsThinking says the model honours ThinkingBody.
	SupportsThinking bool
	// Headers are added to every request.
	Headers map[string]string

	// HTTPClient replaces the SDK's default client (tests).
	HTTPClient *http.Client
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Getenv looks up environment variables; nil = os.Getenv.
	Getenv func(string) string
}

// Model is an Anthropic chat model. It is safe for concurrent use; all
// fields are immutable after New.
type Model struct {
	opts Options
	// messages and models are the two services of the SDK client that
	// Antler calls; keeping only them lets the linker drop the others.
	messages sdk.MessageService
	models   sdk.ModelService
	baseURL  string
	keyErr   error
	logger   *slog.Logger
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
	base := cmp.Or(opts.BaseURL, getenv("ANTHROPIC_BASE_URL"), DefaultBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http(s) URL", base)
	}
	base = apiRoot(base)
	m := &Model{opts: opts, baseURL: base, logger: opts.Logger}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}

	reqOpts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(base + "/")}
	switch key, token := cmp.Or(opts.APIKey, getenv("ANTHROPIC_API_KEY")), getenv("ANTHROPIC_AUTH_TOKEN"); {
	case key != "":
		// This SDK sends the key as a bearer token; x-api-key is added
		// for Anthropic-compatible gateways that only read that header.
		reqOpts = append(reqOpts, option.WithAPIKey(key), option.WithHeader("X-Api-Key", key))
	case token != "":
		reqOpts = append(reqOpts, option.WithAuthToken(token))
	default:
		where := cmp.Or(opts.ConfigKey, fmt.Sprintf("models[] entry %q", opts.Name))
		m.keyErr = &model.ProviderError{Model: opts.Name, Provider: "anthropic",
			Message: "no API key", Hint: "set ANTHROPIC_API_KEY or api_key in " + where}
	}
	switch {
	case opts.MaxRetries < 0:
		reqOpts = append(reqOpts, option.WithMaxRetries(0))
	case opts.MaxRetries > 0:
		reqOpts = append(reqOpts, option.WithMaxRetries(opts.MaxRetries))
	}
	if opts.Timeout > 0 {
		reqOpts = append(reqOpts, option.WithRequestTimeout(opts.Timeout))
	}
	if opts.HTTPClient != nil {
		reqOpts = append(reqOpts, option.WithHTTPClient(opts.HTTPClient))
	}
	for k, v := range opts.Headers {
		reqOpts = append(reqOpts, option.WithHeader(k, v))
	}
	client := sdk.NewClient(reqOpts...)
	m.messages, m.models = client.Messages, client.Models
	return m, nil
}

// apiRoot returns base without trailing slashes and without a final
// /v1 segment: the SDK's paths already start with /v1, and DeerFlow users
// often write the root as https://host/v1 as they do for OpenAI.
func apiRoot(base string) string {
	base = strings.TrimRight(base, "/")
	if trimmed, ok := strings.CutSuffix(base, "/v1"); ok {
		base = strings.TrimRight(trimmed, "/")
	}
	return base
}

// BaseURL returns the API root the model talks to.
func (m *Model) BaseURL() string { return m.baseURL }

// Generate streams the model's answer to req. See [model.ChatModel].
func (m *Model) Generate(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if m.keyErr != nil {
			yield(model.Event{}, m.keyErr)
			return
		}
		params, err := m.params(req)
		if err != nil {
			yield(model.Event{}, m.wrap(ctx, err))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := time.Now()
		stream := m.messages.NewStreaming(ctx, params)
		defer stream.Close()

		var asm assembler
		resp, _ := model.Drain(ctx, stream, asm.add, asm.response, func(err error) error { return m.wrap(ctx, err) }, yield)
		if resp != nil {
			m.logger.Debug("model call done", "model", m.opts.Name, "finish", resp.FinishReason,
				"tool_calls", len(resp.Message.ToolCalls), "elapsed", time.Since(start))
		}
	}
}

// wrap turns an SDK or transport error into a *model.ProviderError;
// cancellation is returned as the context's own error.
func (m *Model) wrap(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	pe := &model.ProviderError{Model: m.opts.Name, Provider: "anthropic", Err: err}
	var apiErr *sdk.Error
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &apiErr):
		pe.StatusCode = apiErr.StatusCode
		pe.Message = cmp.Or(apiErr.Message, strings.TrimSpace(apiErr.RawJSON()), err.Error())
		pe.Code = errorType(apiErr.RawJSON())
		if apiErr.Response != nil {
			pe.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		if pe.StatusCode < 300 {
			// An error event inside a 200 stream.
			pe.StatusCode = 0
			pe.Message = "error while streaming: " + pe.Message
		}
		if apiErr.StatusCode == http.StatusUnauthorized {
			pe.Hint = "check api_key or ANTHROPIC_API_KEY"
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		pe.Message = "the stream ended unexpectedly: " + err.Error()
	case errors.As(err, &netErr), errors.As(err, &opErr):
		pe.Message = fmt.Sprintf("cannot reach %s: %v", m.baseURL, err)
		pe.Hint = "check base_url or ANTHROPIC_BASE_URL"
	default:
		pe.Message = err.Error()
	}
	return pe
}

// errorType is the error.type of an Anthropic error body
// ("rate_limit_error", "overloaded_error"), "" when it has none.
func errorType(raw string) string {
	var body struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return ""
	}
	return body.Error.Type
}

// maxRetryAfter bounds the wait an answer may ask for.
const maxRetryAfter = 2 * time.Minute

// retryAfter is an answer's retry-after-ms or retry-after (seconds) hint,
// at most maxRetryAfter; 0 when it gives none.
func retryAfter(h http.Header) time.Duration {
	for _, hint := range [...]struct {
		name string
		unit time.Duration
	}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
		f, err := strconv.ParseFloat(h.Get(hint.name), 64)
		if err != nil || math.IsNaN(f) || f <= 0 {
			continue
		}
		if f >= float64(maxRetryAfter)/float64(hint.unit) {
			return maxRetryAfter
		}
		return time.Duration(f * float64(hint.unit))
	}
	return 0
}
