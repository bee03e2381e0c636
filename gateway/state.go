package gateway

import (
	"encoding/json"

	"github.com/antlerhq/antler/thread"
)

// stateValues converts a thread state to the values object of LangGraph's
// thread state, as DeerFlow's frontend reads it: messages as LangChain
// dicts, title, artifacts, todos and goal always present, the other keys
// as the state stores them (keys of State.Extra at the top level).
//
// Host paths are never sent: thread_data is left out and viewed_images
// lose their actual_path.
func stateValues(s *thread.State) map[string]any {
	if s == nil {
		s = &thread.State{}
	}
	rest := *s
	rest.Messages, rest.Extra, rest.ThreadData, rest.ViewedImages = nil, nil, nil, nil
	v := map[string]any{}
	if b, err := json.Marshal(&rest); err == nil {
		_ = json.Unmarshal(b, &v)
	}
	delete(v, "messages")
	for k, raw := range s.Extra {
		if _, taken := v[k]; taken {
			continue
		}
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v[k] = x
		}
	}
	msgs := make([]any, 0, len(s.Messages))
	for _, m := range s.Messages {
		msgs = append(msgs, messageDict(m))
	}
	v["messages"] = msgs
	v["title"] = nilIfEmpty(s.Title)
	v["goal"] = nilIfEmpty(s.Goal)
	if s.Artifacts == nil {
		v["artifacts"] = []string{}
	}
	if s.Todos == nil {
		v["todos"] = []any{}
	}
	if len(s.ViewedImages) > 0 {
		imgs := make(map[string]any, len(s.ViewedImages))
		for k, img := range s.ViewedImages {
			imgs[k] = map[string]any{"mime_type": img.MIMEType, "size": img.Size}
		}
		v["viewed_images"] = imgs
	}
	return v
}
