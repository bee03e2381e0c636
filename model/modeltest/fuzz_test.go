package modeltest_test

import (
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler/model/modeltest"
)

// FuzzParseScript checks that any input either fails cleanly or parses
// into a script that survives a JSON round trip.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`{"turns":[{"text":"hi","delay":"5ms","tool_calls":[{"name":"ls","arguments":{"path":"/"}}]}]}`))
	f.Add([]byte(`{"rules":[{"last_role":"tool","reply":{"text":"{last}"}}],"loop":true,"chunk_size":3}`))
	f.Add([]byte(`{"turns":[{"status":500,"error":"x","chunk_delay":12.5}]}`))
	f.Add([]byte(`{"turns":[{"tool_calls":[{"name":"a","arguments":"{bad"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := modeltest.ParseScript(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal parsed script: %v", err)
		}
		if _, err := modeltest.ParseScript(b); err != nil {
			t.Fatalf("re-parse %s: %v", b, err)
		}
	})
}
