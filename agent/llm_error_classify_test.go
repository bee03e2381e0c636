package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/antlerhq/antler/model"
)

// DeerFlow's classification, case by case, in its order of precedence.
func TestClassifyLLMError(t *testing.T) {
	pe := func(status int, msg, code string) error {
		return &model.ProviderError{Model: "m", StatusCode: status, Message: msg, Code: code}
	}
	for _, tc := range []struct {
		name string
		err  error
		want llmFailure
	}{
		{"quota in the message", pe(429, "You exceeded your current quota", ""), llmFailure{false, "quota"}},
		{"quota in the code", pe(429, "denied", "insufficient_quota"), llmFailure{false, "quota"}},
		{"quota in Chinese", pe(402, "账户余额不足", ""), llmFailure{false, "quota"}},
		{"quota wins over busy", pe(503, "billing problem, try again later", ""), llmFailure{false, "quota"}},
		{"auth", pe(401, "Invalid API key provided", ""), llmFailure{false, "auth"}},
		{"auth in the code", pe(401, "Incorrect key", "invalid_api_key"), llmFailure{false, "auth"}},
		{"auth in Chinese", pe(403, "未授权访问", ""), llmFailure{false, "auth"}},
		{"burst by code", pe(429, "Too many requests", "limit_burst_rate"), llmFailure{true, "burst_rate"}},
		{"burst by message", pe(429, "request rate increased too quickly", ""), llmFailure{true, "burst_rate"}},
		{"burst over status", pe(503, "突发速率 exceeded", ""), llmFailure{true, "burst_rate"}},
		{"a plain 429 is transient", pe(429, "Rate limit reached", "rate_limit_exceeded"), llmFailure{true, "transient"}},
		{"5xx", pe(502, "bad gateway", ""), llmFailure{true, "transient"}},
		{"408", pe(408, "timeout", ""), llmFailure{true, "transient"}},
		{"409", pe(409, "conflict", ""), llmFailure{true, "transient"}},
		{"425", pe(425, "too early", ""), llmFailure{true, "transient"}},
		{"unreachable", &model.ProviderError{Message: "cannot reach", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, llmFailure{true, "transient"}},
		{"dropped stream", &model.ProviderError{Message: "the stream ended unexpectedly", Err: io.ErrUnexpectedEOF}, llmFailure{true, "transient"}},
		{"attempt timeout", &model.ProviderError{Message: "slow", Err: fmt.Errorf("read: %w", context.DeadlineExceeded)}, llmFailure{true, "transient"}},
		{"empty stream", &model.ProviderError{Message: "empty", Err: &model.EmptyStreamError{Detail: "x"}}, llmFailure{true, "transient"}},
		{"no response", model.ErrNoResponse, llmFailure{true, "transient"}},
		{"busy without a status", pe(0, "error while streaming: Overloaded", ""), llmFailure{true, "busy"}},
		{"busy in Chinese", pe(0, "服务繁忙，请稍后重试", ""), llmFailure{true, "busy"}},
		{"a missing key is generic", &model.ProviderError{Model: "m", Message: "no API key; set OPENAI_API_KEY"}, llmFailure{false, "generic"}},
		{"400 is generic", pe(400, "invalid role", ""), llmFailure{false, "generic"}},
		{"any other error", errors.New("boom"), llmFailure{false, "generic"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyLLMError(tc.err); got != tc.want {
				t.Errorf("classify(%v) = %+v, want %+v", tc.err, got, tc.want)
			}
		})
	}
}

// The retry message rounds as Python's round() does and never says 0s.
func TestLLMRetryText(t *testing.T) {
	for _, tc := range []struct {
		wait int
		want string
	}{
		{0, "Retrying in 1s."}, {400, "Retrying in 1s."}, {1500, "Retrying in 2s."}, {2500, "Retrying in 2s."}, {3600, "Retrying in 4s."},
	} {
		got := llmRetryText(1, 3, tc.wait, "transient")
		if want := "LLM request retry 1/3: provider request failed temporarily. " + tc.want; got != want {
			t.Errorf("wait %d: %q, want %q", tc.wait, got, want)
		}
	}
}
