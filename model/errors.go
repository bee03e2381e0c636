package model

import "errors"

// ErrNoResponse is returned by Collect when a stream ends without a final
// response.
var ErrNoResponse = errors.New("model: stream ended without a response")

// EmptyStreamError is a provider's stream that ended without a response
// (no finish reason, no content). It matches ErrNoResponse, so that
// callers (the agent's llm_error_handling) treat it as the transient
// failure DeerFlow retries.
type EmptyStreamError struct {
	// Detail says what was missing.
	Detail string
}

func (e *EmptyStreamError) Error() string {
	return "the stream ended without a response (" + e.Detail + ")"
}

// Is reports whether target is ErrNoResponse.
func (e *EmptyStreamError) Is(target error) bool { return target == ErrNoResponse }
