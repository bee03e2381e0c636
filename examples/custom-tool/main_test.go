package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/antlerhq/antler"
)

func TestCustomToolIsListedAndCallable(t *testing.T) {
	var out, errOut bytes.Buffer
	opts := antler.Options{Registry: registry(), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	home := t.TempDir()
	code := antler.Main(t.Context(), []string{"--config", "config.yaml", "--home", home, "tools", "call", "word_stats",
		"--args", `{"text":"hello brave\nnew world"}`, "--json"}, opts)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res struct {
		Content []struct {
			JSON json.RawMessage `json:"json"`
		} `json:"content"`
		IsError bool `json:"is_error"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var compact bytes.Buffer
	if len(res.Content) == 1 {
		_ = json.Compact(&compact, res.Content[0].JSON)
	}
	if res.IsError || compact.String() != `{"words":4,"characters":21,"lines":2}` {
		t.Errorf("unexpected result: %s", out.String())
	}
}
