package builtin

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// Two update_agent calls of one step that change different fields must
// both land: the merge with the stored config happens under the agent's
// lock, so neither call rewrites the config from a stale read.
func TestUpdateAgentConcurrentFieldsNotLost(t *testing.T) {
	e := newAgentEnv(t)
	e.seed(t, "alice", "helper", map[string]any{"name": "helper", "description": "start"}, "soul")
	for i := range 20 {
		desc, skill := fmt.Sprintf("d%d", i), fmt.Sprintf("s%d", i)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, args := range []map[string]any{{"description": desc}, {"skills": []string{skill}}} {
			wg.Go(func() {
				<-start
				if res := callTool(t, e.update, agentCall("alice", "helper"), args); res.IsError {
					t.Errorf("%v: %s", args, res.TextContent())
				}
			})
		}
		close(start)
		wg.Wait()
		a, err := e.store.Load("alice", "helper")
		if err != nil {
			t.Fatal(err)
		}
		if a.Config.Description != desc || !slices.Equal(a.Config.Skills, []string{skill}) {
			t.Fatalf("round %d: a concurrent change was lost: description %q, skills %v", i, a.Config.Description, a.Config.Skills)
		}
	}
}
