package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// sseEvent is one dispatched SSE frame.
type sseEvent struct {
	Event string
	ID    string
	Data  json.RawMessage
}

// sseReader parses an SSE body the way @langchain/langgraph-sdk does
// (docs/api.md): "event:", "data:" and "id:" lines, data lines of
// one frame concatenated without newlines and parsed as JSON, lines
// starting with ':' ignored, a blank line dispatching the frame.
type sseReader struct {
	sc         *bufio.Scanner
	Heartbeats int
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &sseReader{sc: sc}
}

// Next returns the next frame, io.EOF at the end of the body.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data strings.Builder
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if !seen {
				continue
			}
			ev.Data = json.RawMessage(data.String())
			if !json.Valid(ev.Data) {
				return ev, fmt.Errorf("frame %q: data is not single-line JSON: %q", ev.Event, ev.Data)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
			s.Heartbeats++
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			seen = true
			switch field {
			case "event":
				ev.Event = value
			case "data":
				data.WriteString(value) // no newline between data lines
			case "id":
				ev.ID = value
			}
		}
	}
	if err := s.sc.Err(); err != nil {
		return ev, err
	}
	return ev, io.EOF
}

// transcript is what the SDK's stream hook holds after a stream: the
// last values, the message chunks merged by id, and everything else.
type transcript struct {
	Events   []sseEvent
	Values   []map[string]any // every values frame
	Messages map[string]map[string]any
	Order    []string // message ids in first-seen order
	Updates  []map[string]any
	Custom   []map[string]any
	Errors   []map[string]any
	Metadata map[string]any
	Ended    bool
}

func (t *transcript) Last() map[string]any {
	if len(t.Values) == 0 {
		return nil
	}
	return t.Values[len(t.Values)-1]
}

// readAll consumes a stream into a transcript.
func readAll(r io.Reader) (*transcript, error) {
	rd := newSSEReader(r)
	t := &transcript{Messages: map[string]map[string]any{}}
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
		if err := t.add(ev); err != nil {
			return t, err
		}
	}
}

func (t *transcript) add(ev sseEvent) error {
	t.Events = append(t.Events, ev)
	switch ev.Event {
	case "metadata":
		return json.Unmarshal(ev.Data, &t.Metadata)
	case "values":
		var v map[string]any
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			return err
		}
		t.Values = append(t.Values, v)
	case "messages":
		var tuple []json.RawMessage
		if err := json.Unmarshal(ev.Data, &tuple); err != nil || len(tuple) != 2 {
			return fmt.Errorf("messages frame is not a [chunk, metadata] pair: %s", ev.Data)
		}
		var meta map[string]any
		if err := json.Unmarshal(tuple[1], &meta); err != nil || meta == nil {
			return fmt.Errorf("messages metadata is not an object: %s", tuple[1])
		}
		var chunk map[string]any
		if err := json.Unmarshal(tuple[0], &chunk); err != nil {
			return err
		}
		t.merge(chunk)
	case "updates":
		var v map[string]any
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			return err
		}
		t.Updates = append(t.Updates, v)
	case "custom":
		var v map[string]any
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			return err
		}
		t.Custom = append(t.Custom, v)
	case "error":
		var v map[string]any
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			return err
		}
		t.Errors = append(t.Errors, v)
	case "end":
		t.Ended = true
	}
	return nil
}

// merge applies LangChain's chunk concatenation (docs/api.md):
// the type loses its MessageChunk suffix, string content and string
// additional_kwargs are appended, tool_call_chunks are merged by index
// (args appended, id and name replaced). A chunk without id is dropped.
func (t *transcript) merge(chunk map[string]any) {
	id, _ := chunk["id"].(string)
	if id == "" {
		return
	}
	typ, _ := chunk["type"].(string)
	typ = strings.ToLower(strings.TrimSuffix(typ, "MessageChunk"))
	chunk["type"] = typ
	acc, ok := t.Messages[id]
	if !ok {
		t.Messages[id] = chunk
		t.Order = append(t.Order, id)
		return
	}
	if s, ok := chunk["content"].(string); ok {
		prev, _ := acc["content"].(string)
		acc["content"] = prev + s
	}
	kw, _ := acc["additional_kwargs"].(map[string]any)
	if kw == nil {
		kw = map[string]any{}
		acc["additional_kwargs"] = kw
	}
	if nk, ok := chunk["additional_kwargs"].(map[string]any); ok {
		for k, v := range nk {
			if s, ok := v.(string); ok {
				prev, _ := kw[k].(string)
				kw[k] = prev + s
			} else {
				kw[k] = v
			}
		}
	}
	if tcs, ok := chunk["tool_call_chunks"].([]any); ok {
		prev, _ := acc["tool_call_chunks"].([]any)
		for _, c := range tcs {
			cm := c.(map[string]any)
			idx := cm["index"]
			found := false
			for _, p := range prev {
				pm := p.(map[string]any)
				if pm["index"] == idx {
					found = true
					pa, _ := pm["args"].(string)
					ca, _ := cm["args"].(string)
					pm["args"] = pa + ca
					if cm["id"] != nil {
						pm["id"] = cm["id"]
					}
					if cm["name"] != nil {
						pm["name"] = cm["name"]
					}
				}
			}
			if !found {
				prev = append(prev, cm)
			}
		}
		acc["tool_call_chunks"] = prev
	}
	if u, ok := chunk["usage_metadata"]; ok && u != nil {
		acc["usage_metadata"] = u
	}
}

var contentLocationRE = regexp.MustCompile(`/threads/([^/]+)/runs/([^/]+)$`)

// runIDFrom extracts the run id the way the SDK does (docs/api.md): /threads/<tid>/runs/<rid> at the end of Content-Location.
func runIDFrom(contentLocation, tid string) (string, bool) {
	m := contentLocationRE.FindStringSubmatch(contentLocation)
	if m == nil || m[1] != tid {
		return "", false
	}
	return m[2], true
}

// messagesOf returns the values' messages.
func messagesOf(values map[string]any) []map[string]any {
	raw, _ := values["messages"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, m := range raw {
		out = append(out, m.(map[string]any))
	}
	return out
}
