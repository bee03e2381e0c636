package replicas_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// client talks to one replica.
type client struct {
	t    testing.TB
	base string // http://127.0.0.1:port
	http *http.Client
}

func newClient(t testing.TB, base string) *client {
	return &client{t: t, base: base, http: &http.Client{Timeout: 60 * time.Second}}
}

func (c *client) do(method, path string, body any, hdr ...string) *http.Response {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// json sends a request, checks the status and decodes the answer into out
// (when non-nil).
func (c *client) json(method, path string, body any, want int, out any) {
	c.t.Helper()
	resp := c.do(method, path, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

func humanText(text string) map[string]any {
	return map[string]any{"type": "human", "content": []any{map[string]any{"type": "text", "text": text}}}
}

// runBody is the run body DeerFlow's frontend sends.
func runBody(text string) map[string]any {
	return map[string]any{
		"assistant_id":  "lead_agent",
		"input":         map[string]any{"messages": []any{humanText(text)}},
		"context":       map[string]any{"model_name": "test-model", "thinking_enabled": false},
		"stream_mode":   []string{"values", "messages-tuple", "updates", "custom"},
		"on_disconnect": "continue",
	}
}

// frame is one SSE frame as received.
type frame struct {
	Event, ID string
	Data      string
	Raw       string // the frame as written, for byte comparisons
}

// sse reads frames from an SSE body, skipping heartbeat comments.
type sse struct{ r *bufio.Reader }

func newSSE(r io.Reader) *sse { return &sse{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next frame; io.EOF at the end of the body.
func (s *sse) next() (frame, error) {
	var f frame
	var raw strings.Builder
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && raw.Len() > 0 {
				return f, io.ErrUnexpectedEOF
			}
			return f, err
		}
		if line == "\n" {
			if raw.Len() == 0 {
				continue
			}
			f.Raw = raw.String() + "\n"
			return f, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		raw.WriteString(line)
		field, value, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			f.Event = value
		case "data":
			f.Data += value
		case "id":
			f.ID = value
		}
	}
}

// readStream reads frames until the end frame or EOF.
func readStream(body io.Reader) ([]frame, error) {
	s := newSSE(body)
	var out []frame
	for {
		f, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
		if f.Event == "end" {
			return out, nil
		}
	}
}

// checkFrames verifies that ids run 1, 2, ... without gaps from first and
// that the stream ended with an end frame.
func checkFrames(frames []frame, first int) error {
	if len(frames) == 0 {
		return fmt.Errorf("no frames")
	}
	for i, f := range frames {
		if f.ID != fmt.Sprint(first+i) {
			return fmt.Errorf("frame %d (%s) has id %q, want %d", i, f.Event, f.ID, first+i)
		}
	}
	if last := frames[len(frames)-1]; last.Event != "end" {
		return fmt.Errorf("stream ended with %q, not end", last.Event)
	}
	return nil
}

func eventsOf(frames []frame) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.Event)
	}
	return out
}

// runIDOf reads the run id from a stream's Content-Location.
func runIDOf(resp *http.Response) string {
	loc := resp.Header.Get("Content-Location")
	i := strings.LastIndex(loc, "/runs/")
	if i < 0 {
		return ""
	}
	return loc[i+len("/runs/"):]
}
