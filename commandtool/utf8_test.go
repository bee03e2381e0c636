package commandtool_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/antlerhq/antler/commandtool"
	"github.com/antlerhq/antler/tool"
)

// The tail of a long stderr shown to the model must stay valid UTF-8
// even when the cut falls inside a multi-byte character.
func TestExitErrorTailIsValidUTF8(t *testing.T) {
	// 1001 two-byte characters plus one ASCII byte: 2003 bytes, so a
	// byte-based 2000-byte tail starts in the middle of a character.
	tl, err := commandtool.New(commandtool.Options{Name: "t",
		Command: []string{script(t, `i=0; while [ $i -lt 1001 ]; do printf 'é' >&2; i=$((i+1)); done; printf 'x' >&2; exit 1`)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Handler(t.Context(), &tool.Call{}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].Text
	if !res.IsError || !utf8.ValidString(text) {
		t.Fatalf("error text is not valid UTF-8 (is_error %v): %q", res.IsError, text[len(text)-40:])
	}
}
