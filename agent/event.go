package agent

import (
	"encoding/json"

	"github.com/antlerhq/antler/model"
	"github.com/antlerhq/antler/thread"
)

// EventType names an event of a run (the events of `antler run --json`
// and the gateway's stream, docs/api.md).
type EventType string

// The event types. Tools may emit further types through tool.Call.Emit
// (the task_* events of subagents); they are passed through unchanged.
const (
	// EventMessageDelta carries a streamed piece of the assistant's text
	// (Delta) or reasoning (Reasoning).
	EventMessageDelta EventType = "message_delta"
	// EventMessage carries a complete assistant message (Message).
	EventMessage EventType = "message"
	// EventToolStart: a tool call begins (ToolCallID, Name, Arguments).
	EventToolStart EventType = "tool_start"
	// EventToolEnd: a tool call ended (ToolCallID, Name, IsError,
	// DurationMS, and the tool message in Message).
	EventToolEnd EventType = "tool_end"
	// EventState: the non-message part of a step's state update (Update),
	// with the tool call that made it (ToolCallID, Name), or Name
	// TitleNode and no ToolCallID for the thread's automatic title.
	EventState EventType = "state"
	// The subagent events, emitted by the task tool.
	EventTaskStarted   EventType = "task_started"
	EventTaskRunning   EventType = "task_running"
	EventTaskCompleted EventType = "task_completed"
	EventTaskFailed    EventType = "task_failed"
	// EventClarification: the run stopped to ask the user (Data holds the
	// human_input payload, Message the tool message with the question).
	EventClarification EventType = "clarification"
	// EventApproval: a tool call waits for the human's approval (the tool
	// policy asked): ToolCallID, Name and Arguments name the call, Data
	// holds the card's human_input payload, Message its tool message.
	EventApproval EventType = "approval"
	// EventError: the run failed (Error).
	EventError EventType = "error"
	// EventDone is always the last event (Reason, Turns, Usage, ThreadID).
	EventDone EventType = "done"
)

// StopReason says why a run stopped.
type StopReason string

// The stop reasons carried by EventDone.
const (
	// StopCompleted: the model answered without calling tools.
	StopCompleted StopReason = "completed"
	// StopClarification: ask_clarification ended the run; the next user
	// message on the thread resumes it.
	StopClarification StopReason = "clarification"
	// StopApproval: a tool call waits for the human's approval; the next
	// user message on the thread answers it (docs/api.md).
	StopApproval StopReason = "approval"
	// StopEnd: a tool result asked to end the run (Result.End).
	StopEnd StopReason = "end"
	// StopReturnDirect: a return-direct tool was called.
	StopReturnDirect StopReason = "return_direct"
	// StopMaxTurns: the run reached its turn limit.
	StopMaxTurns StopReason = "max_turns"
	// StopLoopCapped: loop detection forced a final answer.
	StopLoopCapped StopReason = "loop_capped"
	// StopSubagentLimitCapped: the subagent limit dropped the task calls
	// of the final answer because the run's delegation budget was spent.
	StopSubagentLimitCapped StopReason = "subagent_limit_capped"
	// StopSafetyCapped: the provider stopped the final answer with a
	// safety signal, and its tool calls were dropped or its empty text
	// explained (safety_finish_reason).
	StopSafetyCapped StopReason = "safety_capped"
	// StopTokenCapped: the token budget's hard stop dropped the tool
	// calls of the final answer (TokenBudget).
	StopTokenCapped StopReason = "token_capped"
	// StopCancelled: the context was cancelled or the consumer stopped.
	StopCancelled StopReason = "cancelled"
	// StopError: the run failed.
	StopError StopReason = "error"
)

// Event is one observation of a run. Only the fields of its Type are set;
// it marshals to the JSON event of `antler run --json`.
type Event struct {
	Type       EventType       `json:"type"`
	Delta      string          `json:"delta,omitempty"`
	Reasoning  string          `json:"reasoning,omitempty"`
	Message    *model.Message  `json:"message,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	DurationMS float64         `json:"duration_ms,omitempty"`
	Update     *thread.Update  `json:"update,omitempty"`
	// Data is the payload of tool-emitted events and of clarification.
	Data     any          `json:"data,omitempty"`
	Error    string       `json:"error,omitempty"`
	Reason   StopReason   `json:"reason,omitempty"`
	ThreadID string       `json:"thread_id,omitempty"`
	RunID    string       `json:"run_id,omitempty"`
	Turns    int          `json:"turns,omitempty"`
	Usage    *model.Usage `json:"usage,omitempty"`
}
