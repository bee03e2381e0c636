package subagent

import (
	"encoding/json"
	"fmt"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// This file is the subagent's side of relaying its approvals to the
// parent's human (docs/design.md, "A subagent's approval is asked of the
// parent's human"): a run that stopped for an approval becomes a paused
// outcome carrying the subagent's state, and a resumed task starts from
// that state with the human's answer.

// pausedOutcome is the outcome of a subagent run that stopped for a
// human's approval: the newest pending call and the whole state, bounded
// by thread.MaxSubagentStateBytes (over it, the ask is refused).
func pausedOutcome(typeName string, state *thread.State) outcome {
	if state == nil || len(state.Approvals) == 0 {
		return failed("Subagent stopped for an approval without a pending call.")
	}
	p := state.Approvals[len(state.Approvals)-1]
	data, err := json.Marshal(state)
	if err != nil {
		return failed("cannot save the paused subagent's state: %v", err)
	}
	if len(data) > thread.MaxSubagentStateBytes {
		return failed("%s needs a human's approval, and the subagent's state (%d bytes) is over the %d bytes a paused task may keep; the call did not run.",
			p.Tool, len(data), thread.MaxSubagentStateBytes)
	}
	pause := &thread.SubagentApproval{Type: typeName, CallID: p.CallID, RequestID: p.RequestID, Tool: p.Tool,
		Arguments: p.Arguments, Rule: p.Rule, Reason: p.Reason, State: data}
	return outcome{Status: builtin.TaskFailed, Error: builtin.TaskPausedError(pause), Pause: pause}
}

// resumedInput is the state and input messages of a resumed task: the
// saved state, and the human's answer as the message that answers the
// subagent's own card (by its request id).
func resumedInput(r *builtin.TaskResume) (*thread.State, []model.Message, error) {
	if r.Pause == nil {
		return nil, nil, fmt.Errorf("subagent: resume without a paused state")
	}
	if len(r.Pause.State) > thread.MaxSubagentStateBytes {
		return nil, nil, fmt.Errorf("subagent: the saved state (%d bytes) is over %d bytes", len(r.Pause.State), thread.MaxSubagentStateBytes)
	}
	state := &thread.State{}
	if err := json.Unmarshal(r.Pause.State, state); err != nil {
		return nil, nil, fmt.Errorf("subagent: the saved state does not parse: %v", err)
	}
	answer := model.UserText(r.Answer)
	answer.Meta = map[string]any{"human_input_response": map[string]any{"request_id": r.Pause.RequestID, "value": r.Answer}}
	return state, []model.Message{answer}, nil
}

// setOutcome records the outcome of a finished execution, with its
// pause, unless a terminal status is already recorded, and reports
// whether this call won. The result and its pause are set in one step
// before done is closed, so a waiter never sees one without the other.
func (e *execution) setOutcome(out outcome) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.res.Status != "" {
		return false
	}
	e.res = builtin.TaskResult{ExecutionID: e.id, Status: out.Status, StopReason: out.StopReason, Result: out.Result,
		Error: out.Error, ModelName: e.modelName, Pause: out.Pause}
	close(e.done)
	return true
}
