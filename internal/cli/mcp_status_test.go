package cli

import (
	"bytes"
	"testing"

	"github.com/antlerhq/antler/mcptools"
)

func TestMCPProgressRendersStates(t *testing.T) {
	var buf bytes.Buffer
	p := newMCPProgress(&statusLine{w: &buf, enabled: true})
	p.update(mcptools.ServerStatus{Name: "b", State: mcptools.StateConnecting})
	p.update(mcptools.ServerStatus{Name: "a", State: mcptools.StateReady})
	p.update(mcptools.ServerStatus{Name: "c", State: mcptools.StateFailed})
	want := "\r\x1b[2Kconnecting MCP servers (1 pending): a ✓ · b … · c ✗"
	if got := buf.String(); !bytes.HasSuffix([]byte(got), []byte(want)) {
		t.Errorf("got %q, want suffix %q", got, want)
	}
	p.done()
	if !bytes.HasSuffix(buf.Bytes(), []byte("\r\x1b[2K")) {
		t.Errorf("line not cleared: %q", buf.String())
	}
}

func TestMCPProgressSilentWhenPiped(t *testing.T) {
	var buf bytes.Buffer
	p := newMCPProgress(newStatusLine(&buf, func(string) string { return "" }))
	p.update(mcptools.ServerStatus{Name: "a", State: mcptools.StateReady})
	p.done()
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a non-terminal", buf.String())
	}
}
