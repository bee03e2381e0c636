package model

import (
	"fmt"
	"net/http"
	"time"
)

// ProviderError is a failure of a model provider: an HTTP error status,
// a broken stream, an unreachable server or a missing credential. It is a
// Go error (the run stops), never something shown to the model. Its text
// is one line that names the models[] entry and, where it helps, what to
// set.
type ProviderError struct {
	// Model is the name of the models[] entry ("" when unknown).
	Model string
	// Provider is a short provider name: "openai", "anthropic", ...
	Provider string
	// StatusCode is the HTTP status of the failed call, 0 when there was
	// none (connection failure, stream error, missing key).
	StatusCode int
	// Message is the provider's own message, or what went wrong.
	Message string
	// Code is the provider's error code or type (error.code, else
	// error.type of the answer), "" when it sent none.
	Code string
	// RetryAfter is how long the provider asked the caller to wait
	// before trying again (retry-after-ms or Retry-After of the last
	// answer), 0 when it did not say.
	RetryAfter time.Duration
	// Hint, when set, says what the user should change.
	Hint string
	// Err is the underlying error, if any.
	Err error
}

// Error formats the error as one line.
func (e *ProviderError) Error() string {
	s := fmt.Sprintf("model %q", e.Model)
	if e.Provider != "" {
		s += " (" + e.Provider + ")"
	}
	switch {
	case e.StatusCode != 0:
		s += fmt.Sprintf(": HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
		if e.Message != "" {
			s += ": " + e.Message
		}
	case e.Message != "":
		s += ": " + e.Message
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }
