package model

import "errors"

// ErrNoResponse is returned by Collect when a stream ends without a final
// response.
var ErrNoResponse = errors.New("model: stream ended without a response")
