package acptools

import (
	"context"
	"testing"
	"time"

	"github.com/antlerhq/antler/config"
)

// The example agents of acp-go-sdk (Go) and @agentclientprotocol/sdk
// (Node) play the same scripted turn: message chunks, a tool call, a
// permission request with allow_once "allow" and reject_once "reject",
// and a closing chunk that depends on the answer. A cancelled permission
// ends the turn (end_turn) without the closing chunk.

const (
	exampleIntro = "I'll help you with that. Let me start by reading some files to understand the current situation." +
		" Now I understand the project structure. I need to make some changes to improve it."
	exampleApproved = " Perfect! I've successfully updated the configuration. The changes have been applied."
	goDisclaimer    = "ACP Go Example Agent — demo only (no AI model)."
)

type peer struct {
	name   string
	prefix string // text before the common intro
	// agent returns the agent's command line, or skips the test.
	agent func(t *testing.T) (command string, args []string)
}

var examplePeers = []peer{
	{name: "go", prefix: goDisclaimer, agent: func(t *testing.T) (string, []string) { return goExampleBin(t), nil }},
	{name: "node", agent: func(t *testing.T) (string, []string) {
		node, script := nodeExample(t)
		return node, []string{script}
	}},
}

func TestExampleAgents(t *testing.T) {
	t.Parallel()
	for _, p := range examplePeers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			command, args := p.agent(t)
			agent := config.ACPAgent{Command: command, Args: args, Description: "example", TimeoutSeconds: 30}

			t.Run("auto-approve collects the whole turn", func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, harnessOptions{})
				a := agent
				a.AutoApprovePermissions = true
				res := h.run(t, a, "Hello agent")
				if got, want := resultText(res), p.prefix+exampleIntro+exampleApproved; got != want || res.IsError {
					t.Errorf("result:\n got %q\nwant %q", got, want)
				}
				if !h.logs.contains("ACP permission auto-approved", "option=allow") {
					t.Errorf("approval not logged:\n%s", h.logs)
				}
				if !h.logs.contains("ACP agent finished", "stop_reason=end_turn") {
					t.Errorf("end_turn not logged:\n%s", h.logs)
				}
				assertGone(t, h.started()...)
			})

			t.Run("default policy denies", func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, harnessOptions{})
				res := h.run(t, agent, "Hello agent")
				if got, want := resultText(res), p.prefix+exampleIntro; got != want || res.IsError {
					t.Errorf("result:\n got %q\nwant %q", got, want)
				}
				if !h.logs.contains("ACP permission denied", "tool_call_id=call_2") {
					t.Errorf("denial not logged:\n%s", h.logs)
				}
				assertGone(t, h.started()...)
			})

			t.Run("cancellation", func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, harnessOptions{})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				// Cancel once the agent is working on the prompt (its first
				// tool call is reported), not after a fixed delay: on a
				// loaded machine node may not have answered initialize yet.
				cancelled := make(chan time.Time, 1)
				go func() {
					for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
						if h.logs.contains("ACP agent tool call") {
							break
						}
					}
					cancelled <- time.Now()
					cancel()
				}()
				_, err := h.call(t, ctx, nil, map[string]config.ACPAgent{"a": agent}, "a", "Hello agent")
				if err != context.Canceled {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				if d := time.Since(<-cancelled); d > defaultCancelGrace+time.Second {
					t.Errorf("the call ended %v after its cancellation", d)
				}
				// The agent answered session/cancel with stopReason
				// "cancelled" before it was stopped.
				if !h.logs.contains("ACP agent acknowledged cancellation", "stop_reason=cancelled") {
					t.Errorf("cancellation not acknowledged:\n%s", h.logs)
				}
				assertGone(t, h.started()...)
			})
		})
	}
}
