package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"syscall"

	"github.com/antlerhq/antler/model"
)

// The reasons a failed model call is classified under (DeerFlow's
// _classify_error), as they appear in llm_retry events and in the
// fallback message's error_reason.
const (
	llmReasonQuota       = "quota"
	llmReasonAuth        = "auth"
	llmReasonBurstRate   = "burst_rate"
	llmReasonTransient   = "transient"
	llmReasonBusy        = "busy"
	llmReasonGeneric     = "generic"
	llmReasonCircuitOpen = "circuit_open"
)

// HTTP statuses worth another attempt (DeerFlow's _RETRIABLE_STATUS_CODES).
var llmRetriableStatus = []int{408, 409, 425, 429, 500, 502, 503, 504}

// The phrases, matched in the lower-cased error text (and the provider's
// error code where DeerFlow reads it too), that put a failure under a
// reason. They are DeerFlow's, Chinese ones included.
var (
	llmBusyPatterns = []string{"server busy", "temporarily unavailable", "try again later", "please retry",
		"please try again", "overloaded", "high demand", "rate limit", "负载较高", "服务繁忙", "稍后重试", "请稍后重试"}
	llmQuotaPatterns = []string{"insufficient_quota", "quota", "billing", "credit", "payment", "余额不足",
		"超出限额", "额度不足", "欠费"}
	llmAuthPatterns = []string{"authentication", "unauthorized", "invalid api key", "invalid_api_key",
		"permission", "forbidden", "access denied", "无权", "未授权"}
	llmBurstPatterns = []string{"limit_burst_rate", "rate increased too quickly", "burst rate", "请求速率增长过快", "突发速率"}
)

// llmBurstMaxAttempts is the attempt budget of a burst-rate failure:
// retrying into a burst adds to the slope being throttled, so one retry
// at most (DeerFlow's _REASON_RETRY_BUDGETS).
const llmBurstMaxAttempts = 2

// llmFailure is a classified model-call failure.
type llmFailure struct {
	retriable bool
	reason    string
}

// classifyLLMError sorts a failed call as DeerFlow does, in its order:
// quota and auth phrases (never retried), burst-rate phrases, transport
// failures (DeerFlow's timeout, connection and stream-drop exception
// classes, and a stream that ended without a response, its IndexError
// case), retriable HTTP statuses, busy phrases, and anything else
// (generic, not retried).
func classifyLLMError(err error) llmFailure {
	text := strings.ToLower(llmErrorText(err))
	var pe *model.ProviderError
	code := ""
	status := 0
	if errors.As(err, &pe) {
		code, status = strings.ToLower(pe.Code), pe.StatusCode
	}
	switch {
	case containsAny(text, llmQuotaPatterns) || containsAny(code, llmQuotaPatterns):
		return llmFailure{false, llmReasonQuota}
	case containsAny(text, llmAuthPatterns):
		return llmFailure{false, llmReasonAuth}
	case containsAny(text, llmBurstPatterns) || containsAny(code, llmBurstPatterns):
		return llmFailure{true, llmReasonBurstRate}
	case isTransportFailure(err, status):
		return llmFailure{true, llmReasonTransient}
	case slices.Contains(llmRetriableStatus, status):
		return llmFailure{true, llmReasonTransient}
	case containsAny(text, llmBusyPatterns):
		return llmFailure{true, llmReasonBusy}
	}
	return llmFailure{false, llmReasonGeneric}
}

// isTransportFailure reports a failure of the connection rather than an
// answer: no HTTP status and a network error, an unexpected end of the
// stream, an attempt's own timeout, or a stream without a response. A
// provider error without a status and without such a cause (a missing API
// key) is not one.
func isTransportFailure(err error, status int) bool {
	if status >= 500 && status <= 599 {
		return true // DeerFlow's InternalServerError class
	}
	if status != 0 {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, model.ErrNoResponse)
}

func containsAny(s string, patterns []string) bool {
	if s == "" {
		return false
	}
	for _, p := range patterns {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// llmErrorText is the text the phrases are matched in: a provider
// error's own message and code (DeerFlow matches the exception's text,
// which holds the provider's error body; Antler's hints around them are
// left out), else the error.
func llmErrorText(err error) string {
	var pe *model.ProviderError
	if errors.As(err, &pe) && pe.Message != "" {
		return strings.TrimSpace(pe.Message + " " + pe.Code)
	}
	return err.Error()
}

// llmErrorDetail is the error as the fallback message's error_detail and
// the run's error record carry it (DeerFlow's str(exc)).
// It is cut at maxLLMErrorDetail bytes (on a rune boundary): a
// provider's error body must not grow the thread without bound.
func llmErrorDetail(err error) string {
	d := strings.TrimSpace(err.Error())
	if d == "" {
		return llmErrorType(err)
	}
	if len(d) > maxLLMErrorDetail {
		d = strings.ToValidUTF8(d[:maxLLMErrorDetail], "") + "..."
	}
	return d
}

// maxLLMErrorDetail bounds an error's detail in a fallback message.
const maxLLMErrorDetail = 4000

// llmErrorType names the error's kind for error_type (DeerFlow: the
// exception's class name): ProviderError for a provider's failure, else
// the Go type's name.
func llmErrorType(err error) string {
	var pe *model.ProviderError
	switch {
	case errors.As(err, &pe):
		return "ProviderError"
	case errors.Is(err, model.ErrNoResponse):
		return "EmptyResponse"
	case errors.Is(err, context.DeadlineExceeded):
		return "Timeout"
	}
	t := strings.TrimPrefix(fmt.Sprintf("%T", err), "*")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	if t == "errorString" || t == "wrapError" || t == "wrapErrors" || t == "joinError" {
		return "Error"
	}
	return t
}

// The texts the user (and the model, on the next turn) reads instead of
// a failed call, and the text of a retry, DeerFlow's.
const (
	llmQuotaText = "The configured LLM provider rejected the request because the account is out of quota, " +
		"billing is unavailable, or usage is restricted. Please fix the provider account and try again."
	llmAuthText = "The configured LLM provider rejected the request because authentication or access is invalid. " +
		"Please check the provider credentials and try again."
	llmBurstText = "The configured LLM provider is temporarily throttling requests because the request rate " +
		"increased too quickly (burst-rate limit). Please wait a moment and try again."
	llmUnavailableText = "The configured LLM provider is temporarily unavailable after multiple retries. " +
		"Please wait a moment and continue the conversation."
	llmCircuitOpenText = "The configured LLM provider is currently unavailable due to continuous failures. " +
		"Circuit breaker is engaged to protect the system. Please wait a moment before trying again."
	llmGenericFormat = "LLM request failed: %s"
)

// llmUserText is the fallback text for a failure under reason.
func llmUserText(err error, reason string) string {
	switch reason {
	case llmReasonQuota:
		return llmQuotaText
	case llmReasonAuth:
		return llmAuthText
	case llmReasonBurstRate:
		return llmBurstText
	case llmReasonBusy, llmReasonTransient:
		return llmUnavailableText
	}
	return fmt.Sprintf(llmGenericFormat, llmErrorDetail(err))
}

// llmRetryText is the message of an llm_retry event.
func llmRetryText(attempt, maxAttempts, waitMs int, reason string) string {
	seconds := max(1, int(math.RoundToEven(float64(waitMs)/1000))) // Python's round
	why := "provider request failed temporarily"
	switch reason {
	case llmReasonBusy:
		why = "provider is busy"
	case llmReasonBurstRate:
		why = "provider is throttling request burst rate"
	}
	return fmt.Sprintf("LLM request retry %d/%d: %s. Retrying in %ds.", attempt, maxAttempts, why, seconds)
}
