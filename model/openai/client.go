package openai

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Limits of what a server can make Antler hold.
const (
	// maxLineBytes bounds one line of a streamed answer, and so one
	// chunk; a chunk carries one step's text or one call's arguments.
	maxLineBytes = 16 << 20
	// maxErrorBytes bounds the body read from a failed answer.
	maxErrorBytes = 64 << 10
	// maxWholeBytes bounds a whole (not streamed) answer.
	maxWholeBytes = 32 << 20
	// maxPingBytes bounds the model listing read by Ping; the rest is
	// not read.
	maxPingBytes = 8 << 20
)

// The retry schedule of the openai-go SDK this client replaces: retry
// n (0-based) waits initialRetryDelay·2^n, capped at maxBackoff, less
// up to a quarter of it as jitter, unless the answer says how long to
// wait (retry-after-ms, then Retry-After in seconds or as an HTTP date);
// a server that asks for more than maxRetryAfter is not retried.
const (
	defaultRetries    = 2
	initialRetryDelay = 500 * time.Millisecond
	maxBackoff        = 8 * time.Second
	maxRetryAfter     = 2 * time.Minute
)

// client sends chat-completions requests to one API root with one key.
// Its fields are immutable after New.
type client struct {
	http    *http.Client
	baseURL string // without a trailing "/"
	key     string
	headers map[string]string
	timeout time.Duration // per attempt, body included; 0 = none
	retries int           // extra attempts; 0 = none
	// sleep waits between attempts; nil = a timer (tests record the
	// delays instead).
	sleep func(ctx context.Context, d time.Duration) error
}

// apiError is a non-2xx answer.
type apiError struct {
	StatusCode int
	Message    string // the error object's message, else the body
	// Code is the error object's code, else its type ("" for none).
	Code string
	// RetryAfter is the answer's wait hint (0 for none), at most
	// maxRetryAfter.
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// streamError is an error frame received in a stream.
type streamError struct{ Message string }

func (e *streamError) Error() string { return "error while streaming: " + e.Message }

// do sends one request, retrying as the SDK did, and returns a 2xx
// response whose body the caller closes, then calls the returned
// cancel. A non-2xx answer becomes an *apiError.
func (c *client) do(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, context.CancelFunc, error) {
	for retry := 0; ; retry++ {
		resp, cancel, err := c.attempt(ctx, method, path, body, accept)
		if err == nil && resp.StatusCode/100 == 2 {
			return resp, cancel, nil
		}
		if ctx.Err() != nil {
			closeAttempt(resp, cancel)
			return nil, nil, ctx.Err()
		}
		delay, again := c.retryDelay(resp, err, retry)
		if !again {
			if err == nil {
				err = readAPIError(resp)
			}
			closeAttempt(resp, cancel)
			return nil, nil, err
		}
		closeAttempt(resp, cancel)
		if err := c.wait(ctx, delay); err != nil {
			return nil, nil, err
		}
	}
}

func closeAttempt(resp *http.Response, cancel context.CancelFunc) {
	if resp != nil {
		resp.Body.Close()
	}
	if cancel != nil {
		cancel()
	}
}

func (c *client) wait(ctx context.Context, d time.Duration) error {
	if c.sleep != nil {
		return c.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *client) attempt(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, context.CancelFunc, error) {
	cancel := context.CancelFunc(func() {})
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// retryDelay says whether a failed attempt (resp or err) is retried and
// after how long: connection errors and 408, 409, 429 and 5xx answers
// are, unless x-should-retry says otherwise, an attempt's own timeout
// ended it, the retries are used up or the server asks for too long a
// wait.
func (c *client) retryDelay(resp *http.Response, err error, retry int) (time.Duration, bool) {
	if retry >= c.retries {
		return 0, false
	}
	if err != nil {
		return backoff(retry), !(c.timeout > 0 && errors.Is(err, context.DeadlineExceeded))
	}
	switch resp.Header.Get("x-should-retry") {
	case "true":
	case "false":
		return 0, false
	default:
		s := resp.StatusCode
		if s != http.StatusRequestTimeout && s != http.StatusConflict && s != http.StatusTooManyRequests && s < 500 {
			return 0, false
		}
	}
	if d, ok, tooLong := retryAfter(resp.Header, time.Now()); ok {
		return d, !tooLong
	}
	return backoff(retry), true
}

// backoff is the wait before retry n without a server hint.
func backoff(retry int) time.Duration {
	d := maxBackoff
	if retry < 5 {
		d = min(initialRetryDelay<<retry, maxBackoff)
	}
	return d - rand.N(d/4)
}

// retryAfter reads the server's wait hint: retry-after-ms, then
// Retry-After as seconds or an HTTP date. ok is false without a usable
// hint; tooLong is true when it exceeds maxRetryAfter.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok, tooLong bool) {
	for _, hint := range [...]struct {
		name string
		unit time.Duration
	}{{"Retry-After-Ms", time.Millisecond}, {"Retry-After", time.Second}} {
		v := h.Get(hint.name)
		if v == "" {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			if math.IsNaN(f) || f < 0 {
				continue
			}
			if math.IsInf(f, 1) || f > float64(maxRetryAfter)/float64(hint.unit) {
				return 0, true, true
			}
			return time.Duration(f * float64(hint.unit)), true, false
		}
		if hint.unit == time.Second {
			if t, err := http.ParseTime(v); err == nil {
				d := max(t.Sub(now), 0)
				return d, true, d > maxRetryAfter
			}
		}
	}
	return 0, false, false
}

// readAPIError reads a failed answer's body (at most maxErrorBytes) into
// an *apiError; a body that is not the API's error object is kept, trimmed,
// as the message.
func readAPIError(resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes+1))
	if err != nil {
		return fmt.Errorf("reading the HTTP %d answer: %w", resp.StatusCode, err)
	}
	ae := &apiError{StatusCode: resp.StatusCode}
	if d, ok, tooLong := retryAfter(resp.Header, time.Now()); ok {
		ae.RetryAfter = d
		if tooLong {
			ae.RetryAfter = maxRetryAfter
		}
	}
	if len(b) > maxErrorBytes {
		ae.Message = fmt.Sprintf("the error answer is larger than %d bytes", maxErrorBytes)
		return ae
	}
	var eb errorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error != nil && eb.Error.Message != "" {
		ae.Message = eb.Error.Message
		ae.Code = cmp.Or(rawString(eb.Error.Code), rawNumber(eb.Error.Code), eb.Error.Type)
		return ae
	}
	ae.Message = strings.TrimSpace(string(b))
	return ae
}

// rawNumber returns raw as text when it is a JSON number, else "".
func rawNumber(raw json.RawMessage) string {
	var n json.Number
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return ""
	}
	return n.String()
}

// chunkStream is an open streamed answer: the chunks of its
// server-sent events up to "[DONE]". It implements model.Stream.
type chunkStream struct {
	resp   *http.Response
	cancel context.CancelFunc
	sc     *bufio.Scanner
	cur    chatChunk
	err    error
	done   bool
}

// stream posts body to /chat/completions and returns its chunks; a
// failed request is the stream's Err.
func (c *client) stream(ctx context.Context, body []byte) *chunkStream {
	resp, cancel, err := c.do(ctx, http.MethodPost, "/chat/completions", body, "text/event-stream")
	if err != nil {
		return &chunkStream{err: err, done: true}
	}
	sc := bufio.NewScanner(resp.Body)
	// A chunk is usually well under 4 KiB; the buffer grows to the limit.
	sc.Buffer(make([]byte, 0, 4<<10), maxLineBytes)
	return &chunkStream{resp: resp, cancel: cancel, sc: sc}
}

// Next reads the next chunk. An event's data lines are joined by "\n";
// comments, event names and events without data are skipped; data
// starting "[DONE]" ends the stream; data with an "error" member ends
// it with a *streamError.
func (s *chunkStream) Next() bool {
	if !s.done && s.next() {
		return true
	}
	s.done = true
	return false
}

// next decodes the next event into s.cur; false at the end, with s.err
// set when the stream failed. An "error" member that is null is not an
// error frame.
func (s *chunkStream) next() bool {
	data, ok := s.event()
	if !ok || bytes.HasPrefix(data, []byte("[DONE]")) {
		return false
	}
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		s.err = frameError(data, probe.Error)
		return false
	}
	s.cur = chatChunk{}
	if err := json.Unmarshal(data, &s.cur); err != nil {
		s.err = fmt.Errorf("a streamed chunk is not a chat.completion.chunk: %w", err)
		return false
	}
	return true
}

// frameError is the error of an error frame: its message, else the
// frame as sent.
func frameError(data, raw json.RawMessage) error {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return &streamError{Message: e.Message}
	}
	if s := rawString(raw); s != "" {
		return &streamError{Message: s}
	}
	return &streamError{Message: string(data)}
}

// event returns the data of the next event with data; false at the end
// of the body or on a read error (kept in s.err).
func (s *chunkStream) event() ([]byte, bool) {
	var data []byte
	have := false
	for s.sc.Scan() {
		line := bytes.TrimSuffix(s.sc.Bytes(), []byte("\r"))
		if len(line) == 0 {
			if have && len(data) > 0 {
				return data, true
			}
			data, have = data[:0], false
			continue
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		if have {
			data = append(data, '\n')
		}
		if len(data)+len(v) > maxLineBytes {
			s.err = fmt.Errorf("a streamed event is larger than %d bytes", maxLineBytes)
			return nil, false
		}
		data, have = append(data, v...), true
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a streamed line is longer than %d bytes", maxLineBytes)
		}
		s.err = err
		return nil, false
	}
	return data, have && len(data) > 0
}

func (s *chunkStream) Current() chatChunk { return s.cur }

func (s *chunkStream) Err() error { return s.err }

// Close releases the answer's connection.
func (s *chunkStream) Close() {
	closeAttempt(s.resp, s.cancel)
	s.resp, s.cancel = nil, nil
}

// post sends body without streaming and decodes the answer (at most
// maxWholeBytes) into out.
func (c *client) post(ctx context.Context, body []byte, out any) error {
	resp, cancel, err := c.do(ctx, http.MethodPost, "/chat/completions", body, "application/json")
	if err != nil {
		return err
	}
	defer closeAttempt(resp, cancel)
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWholeBytes+1))
	if err != nil {
		return err
	}
	if len(b) > maxWholeBytes {
		return fmt.Errorf("the answer is larger than %d bytes", maxWholeBytes)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the answer is not a chat completion: %w", err)
	}
	return nil
}

// get sends GET path and discards at most limit bytes of the answer.
func (c *client) get(ctx context.Context, path string, limit int64) error {
	resp, cancel, err := c.do(ctx, http.MethodGet, path, nil, "application/json")
	if err != nil {
		return err
	}
	defer closeAttempt(resp, cancel)
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
	return err
}
