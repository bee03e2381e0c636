package cli

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/antlerhq/antler/mcptools"
)

// mcpProgress shows, on a terminal only, which MCP servers are still
// connecting, which are ready and which failed, while discovery runs.
// Piped output and NO_COLOR get nothing (failures are logged anyway).
type mcpProgress struct {
	mu     sync.Mutex
	line   *statusLine                     // guarded by mu
	states map[string]mcptools.ServerState // guarded by mu
}

func newMCPProgress(line *statusLine) *mcpProgress {
	return &mcpProgress{line: line, states: map[string]mcptools.ServerState{}}
}

// update is mcptools.Options.OnStatus; it may be called concurrently.
func (p *mcpProgress) update(s mcptools.ServerStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.states[s.Name] = s.State
	p.line.show(p.render())
}

// done clears the line once discovery is over.
func (p *mcpProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line.clear()
}

func (p *mcpProgress) render() string {
	names := make([]string, 0, len(p.states))
	for n := range p.states {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	pending := 0
	for _, n := range names {
		mark := "…"
		switch p.states[n] {
		case mcptools.StateReady:
			mark = "✓"
		case mcptools.StateFailed:
			mark = "✗"
		case mcptools.StateDisabled:
			continue
		default:
			pending++
		}
		parts = append(parts, n+" "+mark)
	}
	return fmt.Sprintf("connecting MCP servers (%d pending): %s", pending, strings.Join(parts, " · "))
}
