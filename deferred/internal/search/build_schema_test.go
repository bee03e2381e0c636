package search

import (
	"encoding/json"
	"testing"
)

// TestUnescape checks the hand-written unescaper against encoding/json:
// what it decodes it decodes the same, and it declines what it does not
// handle.
func TestUnescape(t *testing.T) {
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"plain", `abc`, true},
		{"quote and backslash", `say \"hi\" \\ now`, true},
		{"controls", `a\nb\tc\rd\be\ff\/g`, true},
		{"unicode escape", `caf\u00e9 \u4E2D \u0000`, true},
		{"utf-8", `café \"读\"`, true},
		{"surrogate pair", `\ud83d\ude00`, false},
		{"lone surrogate", `\ud83d`, false},
		{"bad escape", `\x41`, false},
		{"short unicode", `\u12`, false},
		{"bad hex", `\u12g4`, false},
		{"trailing backslash", `abc\`, false},
		{"control byte", "a\x01b", false},
		{"invalid utf-8", "a\xffb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := unescape([]byte("prefix"), []byte(tt.raw))
			if ok != tt.ok {
				t.Fatalf("unescape(%q) ok = %v, want %v", tt.raw, ok, tt.ok)
			}
			if !ok {
				return
			}
			var want string
			if err := json.Unmarshal([]byte(`"`+tt.raw+`"`), &want); err != nil {
				t.Fatalf("json.Unmarshal(%q): %v", tt.raw, err)
			}
			if string(got) != "prefix"+want {
				t.Errorf("unescape(%q) = %q, want %q", tt.raw, got, "prefix"+want)
			}
		})
	}
}
