package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// DefaultBaseURL is the Gemini Developer API's root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// Limits of what the server can make Antler hold.
const (
	// maxEventBytes bounds one server-sent event (one streamed chunk); a
	// chunk carries at most one step's text or one whole function call.
	maxEventBytes = 16 << 20
	// maxErrorBytes bounds the error body read from a failed answer.
	maxErrorBytes = 64 << 10
	// maxPingBytes bounds the model description read by Ping.
	maxPingBytes = 1 << 20
)

// Retry delays: attempt n (1-based) waits initialRetryDelay·2^(n-1)
// plus up to retryJitter, capped at maxRetryDelay (the SDK's schedule).
const (
	initialRetryDelay = time.Second
	retryJitter       = time.Second
	maxRetryDelay     = 60 * time.Second
)

// client sends requests to one API root with one key. Its fields are
// immutable after New.
type client struct {
	http    *http.Client
	baseURL string // ends in "/"
	key     string
	headers http.Header
	timeout time.Duration // per attempt; 0 = none
	retries int           // extra attempts; 0 = none
}

// modelPath is the resource name of a model id: "gemini-2.5-pro" is
// "models/gemini-2.5-pro"; a full name ("models/...", "tunedModels/...")
// is kept.
func modelPath(id string) string {
	if strings.HasPrefix(id, "models/") || strings.HasPrefix(id, "tunedModels/") {
		return id
	}
	return "models/" + id
}

// do sends one request, retrying transport failures and 408, 429 and
// 5xx answers, and returns a 2xx response whose body the caller closes.
// A non-2xx answer becomes an *apiError. The returned cancel ends the
// attempt's timeout and must be called once the body is done.
func (c *client) do(ctx context.Context, method, path string, body []byte) (*http.Response, context.CancelFunc, error) {
	for attempt := 1; ; attempt++ {
		resp, cancel, err := c.attempt(ctx, method, path, body)
		if err == nil && resp.StatusCode/100 == 2 {
			return resp, cancel, nil
		}
		if err == nil {
			err = readAPIError(resp)
			cancel()
		}
		if attempt > c.retries || ctx.Err() != nil || !retryable(err) {
			return nil, nil, err
		}
		wait := min(initialRetryDelay<<(attempt-1)+rand.N(retryJitter), maxRetryDelay)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (c *client) attempt(ctx context.Context, method, path string, body []byte) (*http.Response, context.CancelFunc, error) {
	cancel := context.CancelFunc(func() {})
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+APIVersion+"/"+path, rd)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	for k, vs := range c.headers {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("x-goog-api-key", c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// retryable reports whether a failed attempt is worth repeating: a
// transport failure or an answer of 408, 429 or 5xx.
func retryable(err error) bool {
	var ae *apiError
	if !errors.As(err, &ae) {
		return true
	}
	return ae.Code == http.StatusRequestTimeout || ae.Code == http.StatusTooManyRequests || ae.Code >= 500
}

// readAPIError reads a failed answer's body (at most maxErrorBytes) into
// an *apiError; a body that is not the API's error object is kept as
// the message. It closes the body.
func readAPIError(resp *http.Response) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	if err != nil {
		return fmt.Errorf("reading the HTTP %d answer: %w", resp.StatusCode, err)
	}
	var wrapped struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(b, &wrapped) == nil && wrapped.Error != nil {
		e := wrapped.Error
		e.Code = resp.StatusCode
		return e
	}
	return &apiError{Code: resp.StatusCode, Message: strings.TrimSpace(string(b))}
}

// stream posts req to streamGenerateContent and yields its chunks. A
// chunk that carries an error object ends the stream with that error; a
// read failure is wrapped as "the stream broke".
func (c *client) stream(ctx context.Context, modelID string, req *generateRequest) iter.Seq2[*generateResponse, error] {
	return func(yield func(*generateResponse, error) bool) {
		body, err := json.Marshal(req)
		if err != nil {
			yield(nil, fmt.Errorf("encoding the request: %w", err))
			return
		}
		resp, cancel, err := c.do(ctx, http.MethodPost, modelPath(modelID)+":streamGenerateContent?alt=sse", body)
		if err != nil {
			yield(nil, err)
			return
		}
		defer cancel()
		defer resp.Body.Close()
		for data, err := range sseData(resp.Body) {
			if err != nil {
				yield(nil, fmt.Errorf("the stream broke: %w", err))
				return
			}
			var chunk generateResponse
			if err := json.Unmarshal(data, &chunk); err != nil {
				yield(nil, fmt.Errorf("a streamed chunk is not JSON: %w", err))
				return
			}
			if chunk.Error != nil {
				yield(nil, chunk.Error)
				return
			}
			if !yield(&chunk, nil) {
				return
			}
		}
	}
}

// sseData yields the data of each server-sent event in r (its data
// lines joined by "\n"); events without data are skipped. An event
// larger than maxEventBytes is an error.
func sseData(r io.Reader) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
		var data []byte
		have := false
		for sc.Scan() {
			line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
			if len(line) == 0 {
				if have && !yield(data, nil) {
					return
				}
				data, have = data[:0], false
				continue
			}
			v, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue // comments, event names, ids
			}
			v = bytes.TrimPrefix(v, []byte(" "))
			if have {
				data = append(data, '\n')
			}
			if len(data)+len(v) > maxEventBytes {
				yield(nil, fmt.Errorf("a streamed event is larger than %d bytes", maxEventBytes))
				return
			}
			data, have = append(data, v...), true
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("a streamed line is longer than %d bytes", maxEventBytes)
			}
			yield(nil, err)
			return
		}
		if have {
			yield(data, nil)
		}
	}
}

// get reads a small JSON resource (at most limit bytes) into out.
func (c *client) get(ctx context.Context, path string, limit int64, out any) error {
	resp, cancel, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
